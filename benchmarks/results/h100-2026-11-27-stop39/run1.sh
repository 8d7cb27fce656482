#!/usr/bin/env bash
# stop 39 device run 1: rope variants (next position / resident grid / pipelined tokens) against the tree; the new activation bit tests; rope tests on each variant.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
REPS=2 TESTS='bits_independent' tools/variants src/cuda/rope.cu \
  '--ops rope --shapes 1x0,16x0,128x0,1024x0,2048x0,4096x0,8192x0,16384x0'
cd /tmp
for v in pos posgrid pipe; do
  HETKERN_LIBRARY=/tmp/variants/build-$v/src/libhetkern.so PYTHONPATH=$R/python OMP_WAIT_POLICY=PASSIVE \
    timeout 100 python3 -m pytest -q -p no:cacheprovider -n 8 $R/tests/test_rope.py -k "cuda or gpu" 2>&1 | tail -2 | sed "s/^/$v /"
done | tee $OUT/rope-variant-tests.txt
