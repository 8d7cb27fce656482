#!/usr/bin/env bash
# stop 53 device run 1 (fresh machine): build for sm_90, then the bfloat16
# table against every GPU peer (Liger, FlashInfer, torch eager, torch.compile),
# with the graph timer's warm-up (275dbda) on a device for the first time.
set -uo pipefail
GPU_ARCHS=90 PEER_DTYPE=bfloat16 PEER_CAPS="25,activation=130,norm=290,softmax=105,rope=40" \
  timeout 570 tools/gpu-check peers
echo "gpu-check rc=$?"
grep -c "✘" "$OUT/bf16-peers-SUMMARY.md"
grep "time cap\|skipped" "$OUT/bf16-peers-bench.txt" | head -20
