#!/usr/bin/env bash
# stop 47 device run 3 (H200): the final tree: float32 silu/gelu_tanh through
# QuotientOfAny (signed zero and inf kept), two packs for gelu_tanh only;
# div = the committed form (IEEE division). A/B, the CUDA activation tests,
# memcheck over the float32 call-size tests, tools/check-activations.cu.
set -uo pipefail
R=$PWD
t0=$(date +%s)
REPS=2 TESTS='cuda and activation' SANITIZE='cuda_bits_independent_of_call_size and float32 and (silu or gelu_tanh)' \
  timeout 430 tools/variants src/cuda/activation.cu \
  '--buffers 4 --dtype float32 --ops silu,gelu_tanh --shapes 1x1048576,1x67108864,1x268435456' \
  '--buffers 4 --dtype float32 --ops silu_and_mul,gelu_tanh_and_mul --shapes 128x8192,16384x8192' \
  > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; grep -E "passed|failed|SUMMARY" "$OUT/variants-log.txt"
source .gpu-carry/setup.sh >/dev/null
tvm_inc=$(python3 -c "import tvm_ffi.libinfo as l; print(l.find_include_path())")
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=native -I"$R" -I/tmp/variants/build-tree/include -I"$R/include" \
  -I"$tvm_inc" "$R/tools/check-activations.cu" -o /tmp/check-activations &&
  timeout 100 /tmp/check-activations > "$OUT/check-activations.txt" 2>&1
echo "check-activations rc=$? $(( $(date +%s) - t0 )) s"; grep -E "every input|status" "$OUT/check-activations.txt"
cat "$OUT/variants.txt"
