#!/usr/bin/env bash
# stop 43 device run 1: A/B of softmax.cu (tree: float32 rows of up to
# 262144 values in the cluster kernel at 16 packs a thread, few float32
# rows of 16K-32K values over a cluster, two waves of clusters; onewave:
# one wave; head: HEAD's file) and rope.cu (tree: items spread evenly over
# the block's threads; reg48: the same at 48 registers; head: HEAD's).
set -uo pipefail
R=$PWD
t0=$(date +%s)
rm -rf ab-base/variants && cp -r ab-base/softmax-variants ab-base/variants
F32='--dtype float32 --ops softmax,log_softmax --shapes 1x32000,32x32000,64x32000,1x128256,1x151936,32x128256,32x151936,1x262144'
B16='--ops softmax,log_softmax --shapes 1x32000,32x32000,1x151936,32x151936,64x128256,64x151936'
timeout 420 tools/variants src/cuda/softmax.cu "$F32" "$B16" > "$OUT/softmax-log.txt" 2>&1
echo "softmax rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/softmax-log.txt"
rm -rf ab-base/variants && cp -r ab-base/rope-variants ab-base/variants
REUSE=1 OUT=$OUT/rope timeout 200 tools/variants src/cuda/rope.cu \
  '--ops rope --dtype float32 --shapes 16384x0,4096x0 --buffers 4' '--ops rope --dtype float32 --shapes 1x0,32x0,128x0' \
  '--ops rope --shapes 16384x0,4096x0 --buffers 4' '--ops rope --shapes 1x0,32x0' > "$OUT/rope-log.txt" 2>&1
echo "rope rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/rope-log.txt"
