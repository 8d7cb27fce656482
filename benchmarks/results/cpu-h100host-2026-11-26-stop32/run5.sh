#!/usr/bin/env bash
# Device run 5 of stop 32: softmax A/B (the bfloat16 write-pass proof), every
# CPU test on every target of this host, then issue 13's benchmark with the
# thread sweep on the tree's CPU build.
set -uo pipefail
R=$(pwd)
TESTS='not cuda and not device_mismatch and not jax and not test_build' REPS=2 tools/variants src/cpu/softmax.cc \
  '--ops softmax --shapes 16384x1024,64x32000,4096x4096 --dtype bfloat16 --threads 1,16' 2>&1 | tail -3
cd /tmp
HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH=$R/python python3 -m hetkern > $OUT/info.txt 2>&1
HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH=$R/python timeout 250 python3 -m hetkern.bench \
  --device cpu --ops rmsnorm,silu_and_mul,softmax,gelu --dtypes bfloat16,float16 --cpu-max 16777216 \
  --thread-sweep --out /tmp/hc > $OUT/cpu-bench.txt 2>&1
echo "bench rc=$?"
tar -C /tmp/hc -cf $OUT/cpu-bench.tar . 2>/dev/null
