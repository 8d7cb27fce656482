#!/usr/bin/env bash
# stop 47 device run 1 (H200): A/B of src/cuda/activation.cu.
#   tree     = two packs a thread on large calls (gelu, 16-bit tanh) + float32
#              erf-GELU as one form (kWhole, GaussOfSquare)
#   main     = main's activation.cu (headers inlined)
#   twopacks = two packs, main's float32 erf-GELU
# CUDA activation tests on the tree; memcheck/racecheck over the call-size
# tests; tools/check-activations.cu (every float32 input for erf-GELU).
set -uo pipefail
R=$PWD
t0=$(date +%s)
REPS=1 TESTS='cuda and activation' \
  SANITIZE='cuda_bits_independent_of_call_size and (float32 or bfloat16) and (gelu or tanh)' \
  timeout 420 tools/variants src/cuda/activation.cu \
  '--buffers 4 --dtype float32 --ops gelu --shapes 1x4096,1x1048576,1x4194304,1x67108864,1x268435456' \
  '--buffers 4 --ops gelu,tanh --shapes 1x4096,1x1048576,1x4194304,1x67108864,1x268435456' \
  '--buffers 4 --dtype float16 --ops gelu,tanh --shapes 1x67108864' > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -4 "$OUT/variants-log.txt"
source .gpu-carry/setup.sh >/dev/null
tvm_inc=$(python3 -c "import tvm_ffi.libinfo as l; print(l.find_include_path())")
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=native -I"$R" -I/tmp/variants/build-tree/include -I"$R/include" \
  -I"$tvm_inc" "$R/tools/check-activations.cu" -o /tmp/check-activations &&
  timeout 120 /tmp/check-activations > "$OUT/check-activations.txt" 2>&1
echo "check-activations rc=$? $(( $(date +%s) - t0 )) s"; grep -E "gelu|status" "$OUT/check-activations.txt"
cat "$OUT/variants.txt"
grep -E "passed|failed" "$OUT"/variants-*.txt | tail -5
