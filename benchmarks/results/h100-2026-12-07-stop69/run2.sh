#!/usr/bin/env bash
# Prepared at stop 69, not run. Device call 2 of 2, about 430 s: the float32
# peers table (every family: torch eager, torch.compile, Liger, FlashInfer;
# graph replay and the Python loop) on LIB (default N, main's library; O if
# run1.sh lands O), then memcheck over the layernorm and layernorm_quant calls
# with what is left. Carry as run1.sh's.
set -uo pipefail
lib=${LIB:-N}
source tools/device-ab-env.sh "$lib"
SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/$lib.so PEER_DTYPE=float32 \
  PEER_CAPS=25,activation=170,norm=290,softmax=150,rope=40 OUT=/tmp/pf \
  timeout 480 tools/gpu-check peers > /tmp/pf.log 2>&1
echo "f32 peers on $lib rc=$?" | tee -a "$OUT/laps.txt"
lap "f32 peers"
cp /tmp/pf/f32-peers-SUMMARY.md /tmp/pf/f32-peers-bench.txt "$OUT/"
xz -T0 -c /tmp/pf/f32-peers.tar > "$OUT/f32-peers.tar.xz"
echo "misses: $(grep -c '✘' "$OUT/f32-peers-SUMMARY.md")" | tee -a "$OUT/laps.txt"
SANITIZE_TIMEOUT=$(( 585 - ($(date +%s) - ab_t0) )) sanitize "$lib" memcheck layernorm,layernorm_quant
lap memcheck
