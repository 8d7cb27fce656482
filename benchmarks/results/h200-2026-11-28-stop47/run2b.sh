#!/usr/bin/env bash
# stop 47 device run 2b (H200): A/B of src/cuda/activation.cu: tree = float32
# silu/gelu_tanh through QuotientBounded with two packs on large calls; div =
# the committed form (IEEE division, one pack). Unary and gated float32.
set -uo pipefail
t0=$(date +%s)
REPS=2 timeout 560 tools/variants src/cuda/activation.cu \
  '--buffers 4 --dtype float32 --ops silu,gelu_tanh --shapes 1x4096,1x1048576,1x67108864,1x268435456' \
  '--buffers 4 --dtype float32 --ops silu_and_mul,gelu_tanh_and_mul --shapes 1x8192,128x8192,128x28672,16384x8192' \
  > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"
cat "$OUT/variants.txt"
