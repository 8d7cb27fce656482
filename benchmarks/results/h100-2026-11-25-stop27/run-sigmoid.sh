#!/usr/bin/env bash
# Device run 4 of stop 27 (the final tree): float32 sigmoid's division as a
# refined reciprocal, so that every float32 activation runs in the
# 32-register streaming kernel. Build; tools/check-activations.cu; float32
# sigmoid through the library against torch; every CUDA/GPU/CuPy/JAX test;
# memcheck and racecheck over the op table's CUDA sigmoid cases.
# Usage on the device: bash <this> (carry .gpu-carry).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/work; mkdir -p $W
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $W/build.log 2>&1 || { tail -30 $W/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt
includes=$(python3 -c "import hetkern, tvm_ffi.libinfo as l; print(hetkern.include_dir(), l.find_include_path())")
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=native -I"$R" $(printf -- '-I%s ' $includes) \
  "$R/tools/check-activations.cu" -o /tmp/check-activations && /tmp/check-activations > $OUT/check-activations.txt 2>&1
echo "check-activations: exit $?"; grep -E "^(sigmoid|gelu) |every input|status" $OUT/check-activations.txt
python3 -m hetkern.bench --device cuda --ops sigmoid --dtypes float32 --samples 10 --out $W/bench > $W/bench.log 2>&1
cp $W/bench/table.txt $OUT/bench-sigmoid-table.txt 2>/dev/null || tail -20 $W/bench.log
grep -E "^sigmoid .* (4M|16M|64M|256M)" $OUT/bench-sigmoid-table.txt
echo "bench $(( $(date +%s)-t0 )) s"
OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" -k "cuda or gpu or cupy or jax" 2>&1 | tail -4 > $OUT/cuda-pytest.txt
cat $OUT/cuda-pytest.txt
echo "cuda tests $(( $(date +%s)-t0 )) s"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider "$R/tests/test_opinfo.py" "$R/tests/test_concurrency.py" \
    -k "cuda and sigmoid and not 6553 and not 6554" > "$W/sanitizer-$tool.log" 2>&1
  echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$W/sanitizer-$tool.log" | tr '\n' ' ')" | tee -a $OUT/sanitizers.txt
done
echo "total $(( $(date +%s)-t0 )) s"
