#!/usr/bin/env bash
# stop 54 device run 1 (fresh machine): build for sm_90, then the bfloat16
# table against every GPU peer (Liger, FlashInfer, torch eager,
# torch.compile). Run 2 follows at once on the same machine (the device
# gives a machine back after 30 s idle), so both tables come from one GPU.
set -uo pipefail
{ hostname; nvidia-smi -L; } | tee "$OUT/machine.txt"
GPU_ARCHS=90 PEER_DTYPE=bfloat16 timeout 575 tools/gpu-check peers
echo "gpu-check rc=$?"
grep -c "✘" "$OUT/bf16-peers-SUMMARY.md"
grep "time cap\|skipped" "$OUT/bf16-peers-bench.txt" | head -20
