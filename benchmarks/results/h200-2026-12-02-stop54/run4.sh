#!/usr/bin/env bash
# stop 54 device run 4 (fresh machine, its 16-core host CPU): A/B of
# src/cpu/activation.cc. tree = computed activations split over threads from
# 2048 values a thread (kComputedActivationMinChunk, stop 33); chunk4k = from
# 4096, which this repository's 2-core machine prefers at 4K values (run
# locally, README). The host's figures at 4K-64K values, 16 threads and 2.
set -uo pipefail
t0=$(date +%s)
REPS=2 timeout 400 tools/variants src/cpu/activation.cc \
  '--device cpu --threads 16,2 --dtype float16 --ops gelu,silu,exp --shapes 1x4096,1x8192,1x16384,1x65536' \
  '--device cpu --threads 16,2 --dtype float32 --ops gelu,silu --shapes 1x4096,1x8192,1x16384,1x65536' \
  > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/variants-log.txt"
nproc; lscpu | grep -i "model name\|mhz" | head -3
