#!/usr/bin/env bash
# Device run 2 of stop 26, on the tree with the single-formula 16-bit GELU:
# build, every CUDA/GPU/CuPy/JAX test, then compute-sanitizer memcheck and
# racecheck over the op table's CUDA cases of the changed kernels (gelu,
# gelu_and_mul: test_opinfo) and the stream/graph tests.
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
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider "$R/tests/test_opinfo.py" "$R/tests/test_concurrency.py" \
    -k "cuda and gelu and not 6553 and not 6554" > "$OUT/sanitizer-$tool.log" 2>&1
  echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
echo "total $(( $(date +%s)-t0 )) s"
