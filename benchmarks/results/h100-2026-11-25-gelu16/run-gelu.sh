#!/usr/bin/env bash
# Device run of stop 26: the single-formula 16-bit erf-GELU. Build, its
# accuracy over every float16/bfloat16 input and speed against the two-branch
# formula it replaces (tools/check-activations.cu), the activation tests, and
# the graph-replay probe against torch. Usage on the device: bash <this>
# (carry .gpu-carry).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt
includes=$(python3 -c "import hetkern, tvm_ffi.libinfo as l; print(hetkern.include_dir(), l.find_include_path())")
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=native -I"$R" $(printf -- '-I%s ' $includes) \
  "$R/tools/check-activations.cu" -o /tmp/check-activations && /tmp/check-activations > $OUT/check-activations.txt 2>&1
echo "check-activations: exit $?"; cat $OUT/check-activations.txt
python3 "$R/benchmarks/graph_probe.py" --ops gelu,gelu_tanh,gelu_and_mul > $OUT/graph_probe.txt 2>&1
cat $OUT/graph_probe.txt
OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 8 "$R/tests/test_activation.py" 2>&1 | tail -5 | tee $OUT/pytest-activation.txt
echo "total $(( $(date +%s)-t0 )) s"
