#!/usr/bin/env bash
# stop 56 device run 1. Two tools/variants calls on one build of the tree.
# norm.cu: the tree (RowBlocksPerSm: 2 blocks of 512 threads an SM at 4
# packs a thread, 64 registers) against b3 (3 blocks, 40 registers; ptxas:
# no spills but bfloat16/float16 layernorm_quant, 88-164 bytes).
# softmax.cu: the tree (float32 cluster softmax keeps its exps; log_softmax's
# ones from x - shift) against a (HEAD's file), lb40 and lb48 (the tree with
# 16-bit log_softmax register rows bounded to 40 / 48 registers: 55 in the
# tree at 128-256 threads). Then the softmax and table-GELU CUDA tests and
# memcheck over the cluster tests, on the tree.
set -uo pipefail
t0=$(date +%s)
root=$OUT
mkdir -p "$root/norm" "$root/softmax"
OUT=$root/norm REPS=2 timeout 230 tools/variants src/cuda/norm.cu \
  '--dtype bfloat16 --ops rmsnorm,rmsnorm_quant,layernorm,layernorm_quant --shapes 4096x16384,16384x16384 --buffers 4' \
  '--dtype float32 --ops rmsnorm,rmsnorm_quant,layernorm,layernorm_quant --shapes 4096x8192,16384x8192 --buffers 4' \
  > "$root/norm/log.txt" 2>&1
echo "norm rc=$? $(( $(date +%s) - t0 )) s"; tail -2 "$root/norm/log.txt"
OUT=$root/softmax REUSE=1 VARIANTS=ab-base/variants-softmax REPS=2 \
  TESTS='(test_softmax and cuda) or gelu_table or (test_large and activation)' \
  SANITIZE='test_softmax and (few_rows or vocabulary_rows)' SANITIZE_TOOLS=memcheck SANITIZE_TIMEOUT=120 \
  timeout 340 tools/variants src/cuda/softmax.cu \
  '--dtype float32 --ops softmax --shapes 1x32000,32x32000,64x32000,1x151936,32x128256' \
  '--dtype float32 --ops log_softmax --shapes 1x151936,32x151936' \
  '--dtype bfloat16 --ops log_softmax --shapes 16384x1024,16384x4096,16384x16384,4096x32000 --buffers 4' \
  > "$root/softmax/log.txt" 2>&1
echo "softmax rc=$? $(( $(date +%s) - t0 )) s"; tail -4 "$root/softmax/log.txt"
