#!/usr/bin/env bash
# stop 49 device run 1 (H200): two A/Bs on one tree build.
#  norm.cu: tree     = float32 layernorm rows of 2 cached packs split (256
#                      threads x 4 packs at 4096, as Liger) on large calls
#           main     = HEAD
#           splitall = every T == W dtype split (bfloat16 x 4096-8192 too)
#  activation.cu: tree = float32 gelu / gelu_tanh gated: two packs up to
#                        1024 x SMs packs; main = HEAD
# Tests (norm, gated) on the tree; racecheck/memcheck on the split rows.
set -uo pipefail
t0=$(date +%s)
REPS=2 VARIANTS=ab-base/v-norm TESTS='cuda and (norm or gated)' \
  timeout 380 tools/variants src/cuda/norm.cu \
  '--buffers 4 --dtype float32 --ops layernorm --shapes 256x4096,1024x4096,4096x4096,16384x4096,1024x2048' \
  '--buffers 4 --dtype bfloat16 --ops layernorm --shapes 1024x8192,4096x8192,4096x4096,16384x4096' \
  > "$OUT/norm-log.txt" 2>&1
echo "norm rc=$? $(( $(date +%s) - t0 )) s"; tail -4 "$OUT/norm-log.txt"
mkdir -p "$OUT/act"
REPS=2 REUSE=1 VARIANTS=ab-base/v-act OUT="$OUT/act" \
  SANITIZE='(cuda_row_bits_independent_of_row_count and layernorm and float32) or (cuda_gated_bits_independent_of_shape and gelu and float32)' \
  timeout $(( 575 - ($(date +%s) - t0) )) tools/variants src/cuda/activation.cu \
  '--buffers 4 --dtype float32 --ops gelu_and_mul,gelu_tanh_and_mul --shapes 16x8192,32x8192,64x8192,128x4096,128x8192' \
  > "$OUT/act-log.txt" 2>&1
echo "act rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/act-log.txt"
grep -h . "$OUT"/variants-pytest.txt "$OUT"/act/variants-racecheck.txt "$OUT"/act/variants-memcheck.txt 2>/dev/null | tail -12
