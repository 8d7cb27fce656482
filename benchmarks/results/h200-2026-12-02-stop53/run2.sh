#!/usr/bin/env bash
# stop 53 device run 2: the float32 table against the GPU peers (FlashInfer's
# kernels are bfloat16 only). Meant for run 1's warm machine (SKIP_BUILD=1);
# it got a fresh one, which built the library itself (see README). The
# activation cap is above stop 49's 120 s: the warm-up made run 1's bfloat16
# activations reach their cap (two cases skipped).
set -uo pipefail
SKIP_BUILD=1 PEER_DTYPE=float32 PEER_CAPS="25,activation=170,norm=210,softmax=110,rope=35" \
  timeout 580 tools/gpu-check peers
echo "gpu-check rc=$?"
grep -c "✘" "$OUT/f32-peers-SUMMARY.md"
grep "time cap\|skipped" "$OUT/f32-peers-bench.txt" | head -20
