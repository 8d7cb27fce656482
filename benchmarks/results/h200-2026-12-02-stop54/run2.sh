#!/usr/bin/env bash
# stop 54 device run 2, straight after run 1: the float32 table on the same
# machine (machine.txt must match run 1's: same host and GPU UUID).
set -uo pipefail
{ hostname; nvidia-smi -L; } | tee "$OUT/machine.txt"
SKIP_BUILD=1 GPU_ARCHS=90 PEER_DTYPE=float32 timeout 580 tools/gpu-check peers
echo "gpu-check rc=$?"
grep -c "✘" "$OUT/f32-peers-SUMMARY.md"
grep "time cap\|skipped" "$OUT/f32-peers-bench.txt" | head -20
