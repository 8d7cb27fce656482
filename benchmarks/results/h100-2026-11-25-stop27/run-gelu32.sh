#!/usr/bin/env bash
# Device run 2 of stop 27: float32 erf-GELU with a Newton-refined reciprocal.
# Build; tools/check-activations.cu (now also every float32 input of the
# shipped formula, the one before and the one-formula variant); float32
# gelu/gelu_and_mul through the library against torch (graph replay); every
# CUDA/GPU/CuPy/JAX test; memcheck and racecheck over the op table's CUDA
# gelu cases; the CPU's float32 GELU over every input on this host's AVX-512
# targets (tools/check-gelu-cpu.py); an ncu profile of layernorm_quant and
# layernorm at 4096x4096 bfloat16. Usage on the device: bash <this> (carry .gpu-carry).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt
# CPU exhaustive GELU in the background (4 cores; the GPU work below is GPU-bound)
for t in AVX3_SPR AVX3 AVX2 SSE4; do
  python3 "$R/tools/check-gelu-cpu.py" --targets $t > $OUT/cpu-gelu-$t.txt 2>&1 &
done
includes=$(python3 -c "import hetkern, tvm_ffi.libinfo as l; print(hetkern.include_dir(), l.find_include_path())")
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=native -I"$R" $(printf -- '-I%s ' $includes) \
  "$R/tools/check-activations.cu" -o /tmp/check-activations && /tmp/check-activations > $OUT/check-activations.txt 2>&1
echo "check-activations: exit $?"; grep -E "f32|status" $OUT/check-activations.txt
python3 -m hetkern.bench --device cuda --ops gelu,gelu_and_mul --dtypes float32 --samples 10 --out $OUT/bench-gelu32 > $OUT/bench-gelu32.txt 2>&1
grep -E "^(gelu|gelu_and_mul) " $OUT/bench-gelu32/table.txt 2>/dev/null | head -30 || tail -20 $OUT/bench-gelu32.txt
echo "bench $(( $(date +%s)-t0 )) s"
if command -v ncu > /dev/null; then
  timeout 120 ncu --set full --kernel-name regex:LayerNormKernel --launch-skip 3 --launch-count 2 \
    python3 "$R/benchmarks/graph_probe.py" --ops layernorm_quant,layernorm --shapes 4096x4096 --ncu > $OUT/ncu-layernorm.txt 2>&1
  echo "ncu: exit $? $(wc -l < $OUT/ncu-layernorm.txt) lines"
else
  echo "no ncu"
fi
OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 12 "$R/tests" -k "cuda or gpu or cupy or jax" 2>&1 | tail -4 > $OUT/cuda-pytest.txt
cat $OUT/cuda-pytest.txt
echo "cuda tests $(( $(date +%s)-t0 )) s"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider "$R/tests/test_opinfo.py" "$R/tests/test_concurrency.py" \
    -k "cuda and gelu and not 6553 and not 6554" > "$OUT/sanitizer-$tool.log" 2>&1
  echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
wait
cat $OUT/cpu-gelu-*.txt
echo "total $(( $(date +%s)-t0 )) s"
