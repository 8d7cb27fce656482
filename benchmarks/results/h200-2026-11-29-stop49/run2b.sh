#!/usr/bin/env bash
# stop 49 device run 2b (warm, after 2a): the bfloat16 table against every
# GPU peer, held outputs (stop 48's in_turn), the library 2a installed.
set -uo pipefail
SKIP_BUILD=1 PEER_DTYPE=bfloat16 PEER_CAPS="25,activation=130,norm=290,softmax=105,rope=40" tools/gpu-check peers
echo "gpu-check rc=$?"
grep -c "✘" "$OUT/bf16-peers-SUMMARY.md"
