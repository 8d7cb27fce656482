#!/usr/bin/env bash
# stop 46 device run 3 (H200): tree = main + fused_add_rmsnorm_quant at 2
# blocks an SM (RowRegisters::kFusedQuant); its CUDA norm tests, memcheck
# and racecheck. A/B of src/cuda/activation.cu: two = MapUnaryKernel with 2
# packs a thread, both loaded before either is computed (elementwise.cuh
# inlined into the variant).
set -uo pipefail
t0=$(date +%s)
REPS=1 TESTS='cuda and norm' SANITIZE='cuda and fused_add_rmsnorm_quant and 16384' \
  timeout 520 tools/variants src/cuda/activation.cu \
  '--buffers 4 --dtype float32 --ops gelu,gelu_tanh,tanh,silu --shapes 1x67108864,1x268435456' \
  '--buffers 4 --ops gelu,silu,tanh --shapes 1x67108864,1x268435456' \
  '--ops gelu --shapes 1x4096,1x1048576' > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -12 "$OUT/variants-log.txt"
