#!/usr/bin/env bash
# stop 45 device run 1b (warm, after 1a): the whole bfloat16 table against
# every GPU peer on the H200 (every earlier table is the H100's).
set -uo pipefail
export OUT
SKIP_BUILD=1 PEER_CAPS="25,activation=130,norm=290,softmax=105,rope=40" tools/gpu-check peers
echo "gpu-check rc=$?"
grep -c "✘" "$OUT/bf16-peers-SUMMARY.md"
