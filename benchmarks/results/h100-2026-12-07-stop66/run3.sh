#!/usr/bin/env bash
# Stop 66, device call 3: F = B, except that float16's split layernorm
# kernels keep main's division test a value (B's spilled 32 bytes and ran
# 7 % slower at float16 2048 x 32768, run 2). F against A at the shapes of
# run 2 plus bf16's large ones; F's norm and quant-norm CUDA tests;
# memcheck and racecheck over the norm row kernels on F.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab}.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s" | tee -a "$OUT/laps.txt"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab
for s in A F; do xz -dc .gpu-carry/ab/$s.so.xz > /tmp/ab/$s.so; done
{ hostname; nvidia-smi -L; } > "$OUT/machine.txt" 2>&1
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /")
}
for round in 1; do for side in A F; do
  probe $side --buffers 4 --ops layernorm_quant --shapes 16384x512,16384x3584,16384x1536
  probe $side --buffers 4 --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 16384x4096,4096x16384,16384x16384
  probe $side --buffers 4 --dtype float16 --ops layernorm_quant,rmsnorm_quant --shapes 16384x4096,4096x16384,2048x32768
done; done >> "$OUT/ab-F.txt" 2>&1
lap "spill shapes"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/F.so OMP_WAIT_POLICY=PASSIVE timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" -k cuda > "$OUT/cuda-pytest-F.txt" 2>&1
 echo "F norm and quant-norm tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-F.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/F.so timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda norm > /tmp/sanitizer-$tool.log 2>&1)
  echo "F $tool rc=$?: $(tail -n 30 /tmp/sanitizer-$tool.log | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  tail -n 40 /tmp/sanitizer-$tool.log >> "$OUT/sanitizer-F.txt"
done
lap sanitized
