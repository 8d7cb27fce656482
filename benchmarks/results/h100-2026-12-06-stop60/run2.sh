#!/usr/bin/env bash
# stop 60 device run 2. A = main (896e160), X = what lands: run 1's F (float32
# 2-block rows on 256 threads x 16 packs), G (no 2-block cluster for 16-bit
# rows) and S (one (max, sum) reduction a row) for the rows of 16K-32K values
# only (PickFewRowsClusterShape); longer cluster rows keep two reductions.
# Built here (tools/gpu-ab variant X on the prebuilt B), carried xz'd.
# Graph replay A X A X of the rows X reaches and of longer rows it must leave
# as they were; memcheck and racecheck of tools/sanitize-rows.py softmax on X;
# every CUDA/GPU/CuPy/JAX test of tests/ on X.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A X; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/machine.txt"
HETKERN_LIBRARY=/tmp/ab/X.so python3 -m hetkern > "$OUT/info.txt" 2>&1
lap ready | tee "$OUT/laps.txt"
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /"
}
SHAPES=1x32000,20x32000,32x32000,48x32000,64x32000,128x32000,1x128256,1x151936
timeout 190 bash -c "$(declare -f probe); for pass in 1 2; do
  for side in A X; do
    probe \$side --dtype float32 --ops softmax,log_softmax --shapes $SHAPES
    probe \$side --dtype bfloat16 --ops softmax,log_softmax --shapes $SHAPES
  done
  echo pass \$pass
done" > "$OUT/ab.txt" 2>&1
lap probed | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  HETKERN_LIBRARY=/tmp/ab/X.so timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda softmax > "$OUT/sanitizer-X-$tool.log" 2>&1
  echo "X $tool rc=$?: $(tail -n 30 "$OUT/sanitizer-X-$tool.log" | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
done
lap sanitized | tee -a "$OUT/laps.txt"
HETKERN_LIBRARY=/tmp/ab/X.so OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -p no:cacheprovider -n 15 "$R/tests" \
  -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest.txt" 2>&1
echo "X tests rc=$?: $(tail -n 1 "$OUT/cuda-pytest.txt")" | tee -a "$OUT/laps.txt"
lap tested | tee -a "$OUT/laps.txt"
grep -E "^[AX] (softmax|log_softmax) " "$OUT/ab.txt" | awk '{print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}' | sort -k2,2 -k3,3 -k4,4 -s
cat "$OUT/laps.txt"
