#!/usr/bin/env bash
# stop 44 device run 1 (H200): A/B of softmax.cu. tree = HEAD; c16 = float32
# rows of 131K-262K values on 16-block clusters of 512 threads x 8 packs;
# log64 = log_softmax's 512-thread 8-pack cluster kernel held to 64 registers.
set -uo pipefail
t0=$(date +%s)
F32='--dtype float32 --ops softmax,log_softmax --shapes 1x131072,1x151936,8x151936,32x128256,32x151936,64x32000'
B16='--ops log_softmax,softmax --shapes 1x151936,32x128256,32x151936'
REPS=2 timeout 560 tools/variants src/cuda/softmax.cu "$F32" "$B16" > "$OUT/softmax-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/softmax-log.txt"
