#!/usr/bin/env bash
# stop 40 device run 4: norm parameters prefetched to L1 with the row's loads (l1w) against the tree,
# four sets of inputs in turn, then one set.
set -uo pipefail
export OUT
REPS=2 tools/variants src/cuda/norm.cu \
  '--ops rmsnorm,fused_add_rmsnorm,layernorm --shapes 256x16384,1024x16384,4096x16384,16384x4096 --buffers 4' \
  '--ops rmsnorm_quant,layernorm_quant,fused_add_rmsnorm_quant --shapes 256x16384,4096x16384,8192x12288,4096x4096 --buffers 4' \
  '--ops rmsnorm,fused_add_rmsnorm,layernorm,layernorm_quant --shapes 256x16384,4096x16384,16384x4096'
