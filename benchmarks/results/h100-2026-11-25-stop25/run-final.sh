#!/usr/bin/env bash
# Device run 3 of stop 25, on the final tree: build, every CUDA test, the CPU
# tests of the files this stop changed on every target of the host's CPU
# (AVX3_SPR included, which the 2-core machine lacks), and omp_probe.py.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/final-build.log 2>&1 || { tail -30 $OUT/final-build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/final-info.txt
OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 12 "$R/tests" -k "cuda or gpu or cupy or jax" 2>&1 | tail -4 > $OUT/final-cuda-pytest.txt
cat $OUT/final-cuda-pytest.txt
echo "cuda tests $(( $(date +%s)-t0 )) s"
OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 12 "$R/tests/test_softmax.py" "$R/tests/test_elementwise.py" \
  "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" "$R/tests/test_strided.py" -k "not cuda" 2>&1 | tail -3 > $OUT/final-cpu-pytest.txt
cat $OUT/final-cpu-pytest.txt
echo "cpu tests $(( $(date +%s)-t0 )) s"
timeout 120 python3 "$R/benchmarks/results/h100-2026-11-25-stop25/omp_probe.py" > $OUT/omp-probe.txt 2>&1
cat $OUT/omp-probe.txt
