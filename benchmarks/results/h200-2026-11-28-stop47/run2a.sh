#!/usr/bin/env bash
# stop 47 device run 2a (H200): install the tree (sm_90): float32 erf-GELU in
# one form, two packs a thread on large calls, float32 silu/gelu_tanh through
# QuotientBounded (two packs on large calls too). The whole CUDA test suite;
# tools/check-activations.cu (every float32 input: gelu, silu, sigmoid, tanh,
# gelu_tanh, and the division form before).
set -uo pipefail
R=$PWD
t0=$(date +%s)
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > "$OUT/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/build.log"
cd /tmp
python3 -m hetkern > "$OUT/info.txt" 2>&1
tvm_inc=$(python3 -c "import tvm_ffi.libinfo as l; print(l.find_include_path())")
inc=$(python3 -c "import hetkern; print(hetkern.include_dir())")
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=native -I"$R" -I"$inc" -I"$tvm_inc" \
  "$R/tools/check-activations.cu" -o /tmp/check-activations &&
  timeout 150 /tmp/check-activations > "$OUT/check-activations.txt" 2>&1
echo "check-activations rc=$? $(( $(date +%s) - t0 )) s"; grep -E "f32|status" "$OUT/check-activations.txt"
OMP_WAIT_POLICY=PASSIVE timeout 330 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" -k cuda \
  > "$OUT/cuda-pytest.txt" 2>&1
echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -4 "$OUT/cuda-pytest.txt"
