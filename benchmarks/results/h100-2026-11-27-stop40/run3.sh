#!/usr/bin/env bash
# stop 40 device run 3: fused RMS norms at 4 packs a thread on 2 blocks an SM (fused2) against the tree,
# one set of inputs and four in turn (--buffers 4).
set -uo pipefail
export OUT
REPS=2 tools/variants src/cuda/norm.cu \
  '--ops fused_add_rmsnorm,gemma_fused_add_rmsnorm,fused_add_rmsnorm_quant --shapes 256x16384,1024x16384,4096x16384,16384x16384' \
  '--ops fused_add_rmsnorm,gemma_fused_add_rmsnorm,fused_add_rmsnorm_quant --shapes 256x16384,1024x16384,4096x16384,16384x16384 --buffers 4' \
  '--ops rmsnorm,fused_add_rmsnorm --shapes 2048x1024,256x16384 --buffers 4'
