#!/usr/bin/env bash
# Stop 66, device calls 2 and 3: what landing stop 64's B needs, after run 1
# (../unmeasured-2026-12-07-stop65-rope-and-spills/run1.sh) showed B ahead of
# main on the large bf16 layernorm_quant shapes and C and D behind.
#   run 2:  V=B bash run2.sh
#   run 3:  V=F ROUNDS=1 BF16_LARGE=1 RACECHECK_S=200 bash run2.sh
#     (F = B, except that float16's split layernorm kernels keep main's
#     division test a value: B's spilled 32 bytes and ran 7 % slower at
#     float16 2048 x 32768 in run 2)
# 1. V against A (ROUNDS rounds) where B spills and A does not: 2-pack bf16
#    layernorm_quant rows x 512/1536/3584; float16 layernorm_quant, whose
#    split kernel spills 32 bytes in B; with BF16_LARGE=1 the bf16 quant
#    norms' large shapes too;
# 2. V's norm and quant-norm CUDA tests;
# 3. memcheck and racecheck over the norm row kernels on V.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab}.
set -uo pipefail
V=${V:?V=B or F}
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s" | tee -a "$OUT/laps.txt"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab
for s in A $V; do xz -dc .gpu-carry/ab/$s.so.xz > /tmp/ab/$s.so; done
{ hostname; nvidia-smi -L; } > "$OUT/machine.txt" 2>&1
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /")
}
for round in $(seq "${ROUNDS:-2}"); do for side in A $V; do
  probe $side --buffers 4 --ops layernorm_quant --shapes 16384x512,16384x3584,16384x1536
  [ "${BF16_LARGE:-0}" = 1 ] && probe $side --buffers 4 --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant \
    --shapes 16384x4096,4096x16384,16384x16384
  probe $side --buffers 4 --dtype float16 --ops layernorm_quant,rmsnorm_quant --shapes 16384x4096,4096x16384,2048x32768
done; done >> "$OUT/ab-$V.txt" 2>&1
lap "spill shapes"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/$V.so OMP_WAIT_POLICY=PASSIVE timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" -k cuda > "$OUT/cuda-pytest-$V.txt" 2>&1
 echo "$V norm and quant-norm tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-$V.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  limit=280; [ $tool = racecheck ] && limit=${RACECHECK_S:-280}
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$V.so timeout $limit compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda norm > /tmp/sanitizer-$tool.log 2>&1)
  echo "$V $tool rc=$?: $(tail -n 30 /tmp/sanitizer-$tool.log | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  tail -n 40 /tmp/sanitizer-$tool.log >> "$OUT/sanitizer-$V.txt"
done
lap sanitized
