#!/usr/bin/env bash
# Device run 6 of stop 28: a whole array's max as a grid-stride stream (any
# split gives the same bits for max) against 4775ab8's batched segments
# (A: ab-base/src/cuda/reduce.cu from 4775ab8, built with meson; B: this
# tree, installed with pip); then every CUDA/GPU/CuPy/JAX test and memcheck
# and racecheck over the CUDA reduction tests.
# Usage on the device: bash <this> (carry .gpu-carry).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/work; mkdir -p $W
t0=$(date +%s)
rm -rf /tmp/base /tmp/bA && cp -r "$R" /tmp/base && cp -r "$R"/ab-base/src/. /tmp/base/src/ && rm -rf /tmp/base/ab-base
(python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $W/build.log 2>&1; echo "B (pip): $?") &
(cd /tmp/base && meson setup /tmp/bA -Dgpu_archs=90 --buildtype=release > $W/setupA.log 2>&1 && ninja -C /tmp/bA > $W/buildA.log 2>&1; echo "A: $?") &
wait
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt
probe() {  # library (A, or B: the installed package), args...
  local lib=$1; shift
  if [ $lib = A ]; then
    HETKERN_LIBRARY=/tmp/bA/src/libhetkern.so PYTHONPATH="$R/python" python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$lib /"
  else
    python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$lib /"
  fi
}
for lib in A B A B; do
  probe $lib --dtype bfloat16 --ops max --shapes 1x1048576,1x4194304,1x16777216,1x67108864
  probe $lib --dtype float32 --ops max --shapes 1x16777216,1x67108864
done > $OUT/ab-max.txt
probe B --dtype bfloat16 --ops max --shapes 1x67108864 --compile >> $OUT/ab-max.txt
echo "probe $(( $(date +%s)-t0 )) s"
OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" -k "cuda or gpu or cupy or jax" 2>&1 | tail -4 > $OUT/cuda-pytest.txt
cat $OUT/cuda-pytest.txt
echo "cuda tests $(( $(date +%s)-t0 )) s"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_reduce.py" -k "cuda and (max or huge)" > "$W/sanitizer-$tool.log" 2>&1
  echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$W/sanitizer-$tool.log" | tr '\n' ' ')" | tee -a $OUT/sanitizers.txt
  grep -oE "Race reported between [A-Za-z]+ access at [^(<]*" "$W/sanitizer-$tool.log" | sort | uniq -c | tee -a $OUT/sanitizers.txt
done
echo "total $(( $(date +%s)-t0 )) s"
