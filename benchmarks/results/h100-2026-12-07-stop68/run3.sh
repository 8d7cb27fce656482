#!/usr/bin/env bash
# Stop 68, device call 3: on N (as run2.sh), racecheck (run 2 had memcheck) over the
# norm row kernels' launch shapes (tools/sanitize-rows.py cuda norm: L changed
# layernorm_quant's grid), then the float32 peers table, every family.
# Carry as run2.sh's.
set -uo pipefail
export SANITIZE_TIMEOUT=170
source tools/device-ab-env.sh N
sanitize N racecheck norm
lap sanitized
SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/N.so PEER_DTYPE=float32 \
  PEER_CAPS=25,activation=170,norm=290,softmax=150,rope=40 OUT=/tmp/pf \
  timeout $(( 585 - ($(date +%s) - ab_t0) )) tools/gpu-check peers > /tmp/pf.log 2>&1
echo "f32 peers rc=$?" | tee -a "$OUT/laps.txt"
lap "f32 peers"
cp /tmp/pf/f32-peers-SUMMARY.md "$OUT/"; xz -T0 -c /tmp/pf/f32-peers.tar > "$OUT/f32-peers.tar.xz"
echo "misses: $(grep -c '✘' "$OUT/f32-peers-SUMMARY.md")" | tee -a "$OUT/laps.txt"
grep '✘' "$OUT/f32-peers-SUMMARY.md" | cut -c1-200
