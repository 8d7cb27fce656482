#!/usr/bin/env bash
# stop 46 device run 1a (H200): A/B of src/cuda/norm.cu. tree = main;
# cs = the norms' residual and out stores evict-first (st.global.cs), at
# the large bfloat16 rows behind a peer (fused_add_rmsnorm_quant,
# fused_add_rmsnorm, layernorm x16384) and decode rows (no loss there).
set -uo pipefail
R=$PWD
t0=$(date +%s)
REPS=2 TESTS='cuda and norm and bfloat16' timeout 420 tools/variants src/cuda/norm.cu \
  '--buffers 4 --compile --ops fused_add_rmsnorm_quant,fused_add_rmsnorm,layernorm,rmsnorm_quant --shapes 4096x16384,16384x16384' \
  '--ops rmsnorm,fused_add_rmsnorm,fused_add_rmsnorm_quant --shapes 1x4096,128x4096' > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/variants-log.txt"
cp /tmp/hetkern-variants/* "$OUT/" 2>/dev/null
ls "$OUT"
