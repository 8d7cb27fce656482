#!/usr/bin/env bash
# stop 48 device run 2 (H200): A/B of src/cuda/activation.cu.
#   tree     = float32 tanh two packs on large calls; 16-bit erf-GELU gated
#              ops two packs from 16-byte packs on
#   main     = main's activation.cu (headers inlined)
#   blk512   = tree + float32 gated middle range as Liger: 512 threads x 4 packs
#   fastsilu = tree + float32 silu as x * rcp(1 + __expf(-x)) (timing only:
#              how much of silu_and_mul 128x8192 is the accurate sigmoid)
# CUDA activation tests on the tree; racecheck/memcheck over the call-size
# and gated-shape tests of tanh and gelu.
set -uo pipefail
t0=$(date +%s)
REPS=1 TESTS='cuda and activation' \
  SANITIZE='(cuda_bits_independent_of_call_size and tanh and not float64) or (cuda_gated_bits_independent_of_shape and gelu and not float64)' \
  timeout 560 tools/variants src/cuda/activation.cu \
  '--buffers 4 --dtype float32 --ops silu_and_mul,gelu_tanh_and_mul --shapes 32x8192,128x8192' \
  '--buffers 4 --dtype bfloat16 --ops gelu_and_mul,silu_and_mul --shapes 32x8192,64x8192,128x8192' \
  '--buffers 4 --dtype float16 --ops gelu_and_mul --shapes 128x8192' \
  '--buffers 4 --dtype float32 --ops tanh --shapes 1x1048576,1x67108864,1x268435456' \
  > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; grep -E "passed|failed|SUMMARY" "$OUT"/variants-*.txt | tail -8
cat "$OUT/variants.txt"
