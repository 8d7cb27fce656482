#!/usr/bin/env bash
# stop 61 device run 1. A = main (1f6d29f), B = A + float32 softmax terms as
# exp2f(fma(x, log2 e, -m)) (Log2Term: the register, shared-row and cluster
# kernels), D = B + float32 rows of 16K-32K values on clusters while rows x
# blocks fit two blocks an SM (not one). Built here (tools/gpu-ab prebuild,
# variant D), carried xz'd. The accuracy of A and B against docs/softmax.md's
# bound (benchmarks/softmax_accuracy.py); graph replay A B D A B D of the
# float32 rows; memcheck and racecheck of tools/sanitize-rows.py softmax on B
# and D; the softmax tests on B and D.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A B D; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/machine.txt"
HETKERN_LIBRARY=/tmp/ab/B.so python3 -m hetkern > "$OUT/info.txt" 2>&1
lap ready | tee "$OUT/laps.txt"
for s in A B; do
  HETKERN_LIBRARY=/tmp/ab/$s.so timeout 100 python3 "$R/benchmarks/softmax_accuracy.py" > "$OUT/accuracy-$s.txt" 2>&1 &
done
wait
lap accuracy | tee -a "$OUT/laps.txt"
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 80 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /"
}
SHAPES=1x32000,24x32000,32x32000,48x32000,64x32000,96x32000,128x32000,256x32000,1x128256,1x151936,4096x4096
timeout 230 bash -c "$(declare -f probe); for pass in 1 2; do
  for side in A B D; do
    probe \$side --dtype float32 --ops softmax,log_softmax --shapes $SHAPES
  done
  echo pass \$pass
done" > "$OUT/ab.txt" 2>&1
lap probed | tee -a "$OUT/laps.txt"
for s in B D; do
  for tool in memcheck racecheck; do
    HETKERN_LIBRARY=/tmp/ab/$s.so timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 \
      python3 "$R/tools/sanitize-rows.py" cuda softmax > "$OUT/sanitizer-$s-$tool.log" 2>&1
    echo "$s $tool rc=$?: $(tail -n 30 "$OUT/sanitizer-$s-$tool.log" | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  done
done
lap sanitized | tee -a "$OUT/laps.txt"
for s in B D; do
  HETKERN_LIBRARY=/tmp/ab/$s.so OMP_WAIT_POLICY=PASSIVE timeout 70 python3 -m pytest -q -p no:cacheprovider -n 8 \
    "$R/tests/test_softmax.py" -k "cuda" > "$OUT/softmax-pytest-$s.txt" 2>&1 &
done
wait
for s in B D; do echo "$s softmax tests: $(tail -n 1 "$OUT/softmax-pytest-$s.txt")" | tee -a "$OUT/laps.txt"; done
lap tested | tee -a "$OUT/laps.txt"
grep -E "^[ABD] (softmax|log_softmax) " "$OUT/ab.txt" | awk '{print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}' | sort -k2,2 -k3,3 -k4,4 -s
cat "$OUT/laps.txt"
