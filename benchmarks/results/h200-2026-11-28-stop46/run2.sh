#!/usr/bin/env bash
# stop 46 device run 2 (H200): A/B of src/cuda/norm.cu at long rows.
# tree = main; fused2 = the fused kernels at 4 packs a thread bounded to 2
# blocks an SM (64 registers; ptxas: the quant one spills nothing, the
# plain one 32 bytes) instead of 1; stream = rows too long for a
# 512-thread block stream instead of kWholeSm (float32 x16384).
set -uo pipefail
t0=$(date +%s)
REPS=2 timeout 560 tools/variants src/cuda/norm.cu \
  '--buffers 4 --dtype float32 --ops rmsnorm,layernorm,rmsnorm_quant,layernorm_quant --shapes 4096x16384,16384x16384' \
  '--buffers 4 --ops fused_add_rmsnorm,fused_add_rmsnorm_quant --shapes 4096x16384,16384x16384' \
  '--buffers 4 --dtype float32 --ops fused_add_rmsnorm,fused_add_rmsnorm_quant --shapes 4096x8192,16384x8192' > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/variants-log.txt"
