#!/usr/bin/env bash
# Prepared at stop 64 and not run there (no device machine could be
# started): A = main (HEAD when prepare.sh built it), B = main with the quant norms'
# output pass taking the scale's way of division (QuantScale::WithDivision)
# once a row instead of a branch a value; C = B with large calls building
# the scale's reciprocal at the block's first row, after its loads, from L1
# (RowQuantScale::BuildOnce), not before them. In order of need, since the
# session's device time left may cut the call (what is in $OUT comes back):
# graph replay A B C of the quant norms' large shapes; C's quant-norm CUDA
# tests; memcheck and racecheck over the norm row kernels on C; decode
# shapes and float32; softmax 4096 x 128256 / 151936 (issue 11's >= 2.6
# TB/s); the large shapes again.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s" | tee -a "$OUT/laps.txt"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab
for s in A B C; do xz -dc .gpu-carry/ab/$s.so.xz > /tmp/ab/$s.so; done
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/machine.txt" 2>&1
lap ready
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /")
}
large() { for side in A B C; do probe $side --buffers 4 --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 16384x4096,4096x16384,16384x16384; done; }
large >> "$OUT/ab.txt" 2>&1
lap "large shapes"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/C.so OMP_WAIT_POLICY=PASSIVE timeout 100 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_norm_quant.py" -k cuda > "$OUT/cuda-pytest-C.txt" 2>&1
 echo "C quant-norm tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-C.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/C.so timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda norm > /tmp/sanitizer-$tool.log 2>&1)
  echo "C $tool rc=$?: $(tail -n 30 /tmp/sanitizer-$tool.log | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  tail -n 40 /tmp/sanitizer-$tool.log >> "$OUT/sanitizer.txt"
done
lap sanitized
for side in A B C; do
  probe $side --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 1x4096,128x4096
  probe $side --buffers 4 --dtype float32 --ops layernorm_quant,fused_add_rmsnorm_quant --shapes 16384x4096,4096x16384
done >> "$OUT/ab.txt" 2>&1
lap "decode and float32"
for dt in bfloat16 float32; do probe C --dtype $dt --ops softmax,log_softmax --shapes 4096x128256,4096x151936; done > "$OUT/softmax-4096.txt" 2>&1
lap softmax
large >> "$OUT/ab.txt" 2>&1
lap "large shapes again"
