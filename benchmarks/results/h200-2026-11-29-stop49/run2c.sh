#!/usr/bin/env bash
# stop 49 device run 2c (warm, after 2b): the float32 table against the GPU
# peers (FlashInfer's kernels are bfloat16), held outputs.
set -uo pipefail
SKIP_BUILD=1 PEER_DTYPE=float32 PEER_CAPS="25,activation=120,norm=210,softmax=110,rope=35" timeout 560 tools/gpu-check peers
echo "gpu-check rc=$?"
grep -c "✘" "$OUT/f32-peers-SUMMARY.md"
