#!/usr/bin/env bash
# Stop 70 (not run), the short device call (the session's last ~250 s), on N (main's
# library, .gpu-carry/ab/N.so.xz):
# 1. racecheck over the layernorm and layernorm_quant calls of
#    tools/sanitize-rows.py (stop 68's L changed layernorm_quant's grid;
#    memcheck passed then), at most 100 s;
# 2. graph replay of issue 14's new norms in float32 against torch, Liger and
#    FlashInfer (graph_probe: no torch.compile), decode and large rows;
# 3. with the time left, float32 layernorm's split whole-SM rows, N against
#    P (P.diff).
# CALL_SECONDS (default 240): the call's limit. Carry as run1.sh's.
set -uo pipefail
call=${CALL_SECONDS:-240}
source tools/device-ab-env.sh N P
SANITIZE_TIMEOUT=100 sanitize N racecheck layernorm,layernorm_quant
lap racecheck
left=$(seconds_left "$call")
[ "$left" -ge 20 ] || exit 0
PROBE_TIMEOUT=$(( left - 15 )) probe N --buffers 2 --dtype float32 \
  --ops gemma_rmsnorm,gemma_fused_add_rmsnorm,rmsnorm_quant,fused_add_rmsnorm_quant,layernorm_quant \
  --shapes 1x4096,128x4096,16384x4096,4096x16384 > "$OUT/f32-new-norms.txt" 2>&1
lap "new norms"
left=$(seconds_left "$call")
[ "$left" -ge 20 ] || exit 0
for side in N P; do
  PROBE_TIMEOUT=$(( left / 2 )) probe $side --buffers 2 --dtype float32 --ops layernorm \
    --shapes 4096x16384,16384x16384,256x16384
done > "$OUT/ab-P.txt" 2>&1
lap "N against P"
