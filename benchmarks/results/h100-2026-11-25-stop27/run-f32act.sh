#!/usr/bin/env bash
# Device run 3 of stop 27: float32 activations in the 32-register streaming
# kernel (kFitsStreamingBound), on top of run 2's GELU reciprocal. Build;
# float32 activations through the library against torch (graph replay);
# every CUDA/GPU/CuPy/JAX test; memcheck and racecheck over the op table's
# CUDA activation cases; an ncu profile of layernorm_quant and layernorm at
# 4096x4096 bfloat16 (a lead for later). At most 8 files come back: the
# rest goes into extra.tar. Usage on the device: bash <this> (carry .gpu-carry).
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
python3 -m hetkern.bench --device cuda --ops exp,gelu,gelu_tanh,relu,sigmoid,silu,tanh,gelu_and_mul --dtypes float32 \
  --samples 10 --out $W/bench > $W/bench.log 2>&1
cp $W/bench/table.txt $OUT/bench-f32-table.txt 2>/dev/null || tail -20 $W/bench.log
grep -E "^(exp|gelu|gelu_tanh|relu|sigmoid|silu|tanh|gelu_and_mul) .* (64M|256M|16384x8192)" $OUT/bench-f32-table.txt
echo "bench $(( $(date +%s)-t0 )) s"
if command -v ncu > /dev/null; then
  timeout 120 ncu --set full --kernel-name regex:LayerNormKernel --launch-skip 3 --launch-count 2 \
    python3 "$R/benchmarks/graph_probe.py" --ops layernorm_quant,layernorm --shapes 4096x4096 --ncu > $OUT/ncu-layernorm.txt 2>&1
  echo "ncu: exit $? $(wc -l < $OUT/ncu-layernorm.txt) lines"
fi
OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 12 "$R/tests" -k "cuda or gpu or cupy or jax" 2>&1 | tail -4 > $OUT/cuda-pytest.txt
cat $OUT/cuda-pytest.txt
echo "cuda tests $(( $(date +%s)-t0 )) s"
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool "$tool" --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider "$R/tests/test_opinfo.py" "$R/tests/test_concurrency.py" \
    -k "cuda and (gelu or silu or sigmoid or tanh or exp or relu) and not 6553 and not 6554" > "$W/sanitizer-$tool.log" 2>&1
  echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|passed|failed' "$W/sanitizer-$tool.log" | tr '\n' ' ')" | tee -a $OUT/sanitizers.txt
done
tar -C $W -cf $OUT/extra.tar .
echo "total $(( $(date +%s)-t0 )) s"
