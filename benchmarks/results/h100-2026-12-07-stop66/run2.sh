#!/usr/bin/env bash
# Stop 66, device call 2: what landing stop 64's B needs, after run 1
# (run1.sh of ../unmeasured-2026-12-07-stop65-rope-and-spills/) showed B
# ahead of main on the large bf16 layernorm_quant shapes and C and D behind.
# 1. B against A where B spills and A does not (2-pack bf16 layernorm_quant
#    rows x 512/1536/3584; float16 layernorm_quant, whose whole-SM split
#    kernel spills 32 bytes in B);
# 2. B's norm and quant-norm CUDA tests;
# 3. memcheck and racecheck over the norm row kernels on B.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab}.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s" | tee -a "$OUT/laps.txt"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab
for s in A B; do xz -dc .gpu-carry/ab/$s.so.xz > /tmp/ab/$s.so; done
{ hostname; nvidia-smi -L; } > "$OUT/machine.txt" 2>&1
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /")
}
for round in 1 2; do for side in A B; do
  probe $side --buffers 4 --ops layernorm_quant --shapes 16384x512,16384x3584,16384x1536
  probe $side --buffers 4 --dtype float16 --ops layernorm_quant,rmsnorm_quant --shapes 16384x4096,4096x16384,2048x32768
done; done >> "$OUT/ab-B.txt" 2>&1
lap "spill shapes"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/B.so OMP_WAIT_POLICY=PASSIVE timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" -k cuda > "$OUT/cuda-pytest-B.txt" 2>&1
 echo "B norm and quant-norm tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-B.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/B.so timeout 280 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda norm > /tmp/sanitizer-$tool.log 2>&1)
  echo "B $tool rc=$?: $(tail -n 30 /tmp/sanitizer-$tool.log | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  tail -n 40 /tmp/sanitizer-$tool.log >> "$OUT/sanitizer-B.txt"
done
lap sanitized
