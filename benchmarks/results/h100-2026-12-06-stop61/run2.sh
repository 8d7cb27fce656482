#!/usr/bin/env bash
# stop 61 device run 2. X = what lands: run 1's B (float32 softmax terms as
# exp2f(fma(x, log2 e, -m))) in the register and shared-row kernels only;
# the cluster kernel keeps expf. Built here (tools/gpu-ab variant X),
# carried xz'd with A = main. Every CUDA/GPU/CuPy/JAX test of tests/ on X;
# memcheck and racecheck of tools/sanitize-rows.py softmax on X; graph
# replay A X A X of the float32 rows X reaches, and of cluster rows it must
# leave as they were. At most 8 files come back: all under $OUT.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A X; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv;
  HETKERN_LIBRARY=/tmp/ab/X.so python3 -m hetkern; } > "$OUT/machine.txt" 2>&1
lap ready | tee "$OUT/laps.txt"
HETKERN_LIBRARY=/tmp/ab/X.so OMP_WAIT_POLICY=PASSIVE timeout 330 python3 -m pytest -q -rfE -p no:cacheprovider -n 15 \
  "$R/tests" -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest.txt" 2>&1
echo "X tests rc=$?: $(tail -n 1 "$OUT/cuda-pytest.txt")" | tee -a "$OUT/laps.txt"
lap tested | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  HETKERN_LIBRARY=/tmp/ab/X.so timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda softmax > /tmp/sanitizer-$tool.log 2>&1
  echo "X $tool rc=$?: $(tail -n 30 /tmp/sanitizer-$tool.log | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  tail -n 40 /tmp/sanitizer-$tool.log >> "$OUT/sanitizer.txt"
done
lap sanitized | tee -a "$OUT/laps.txt"
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /"
}
SHAPES=32x32000,96x32000,128x32000,256x32000,4096x32000,1024x1024,4096x4096,16384x4096
timeout 200 bash -c "$(declare -f probe); for pass in 1 2; do
  for side in A X; do
    probe \$side --dtype float32 --ops softmax --shapes $SHAPES
  done
  echo pass \$pass
done" > "$OUT/ab.txt" 2>&1
lap probed | tee -a "$OUT/laps.txt"
grep -E "^[AX] softmax " "$OUT/ab.txt" | awk '{print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}' | sort -k2,2 -k3,3 -k4,4 -s
cat "$OUT/laps.txt"
