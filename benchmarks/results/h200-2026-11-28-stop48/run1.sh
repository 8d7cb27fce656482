#!/usr/bin/env bash
# stop 48 device run 1 (H200): A/B of src/cuda/activation.cu.
#   u2f32 / u4f32 = float32 gated ops take 2 / 4 packs a thread in the middle
#                   range (256..2048 x SMs packs: 128 x 8192 is there)
#   u2all         = every dtype takes 2 there
#   tanh2         = float32 tanh takes two packs on large calls
set -uo pipefail
t0=$(date +%s)
REPS=2 timeout 540 tools/variants src/cuda/activation.cu \
  '--buffers 4 --dtype float32 --ops silu_and_mul,gelu_tanh_and_mul,gelu_and_mul --shapes 32x8192,64x8192,128x8192,128x4096' \
  '--buffers 4 --dtype bfloat16 --ops silu_and_mul,gelu_and_mul --shapes 64x8192,128x8192' \
  '--buffers 4 --dtype float32 --ops tanh --shapes 1x1048576,1x67108864,1x268435456' \
  > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/variants-log.txt"
cat "$OUT/variants.txt"
