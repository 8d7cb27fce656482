#!/usr/bin/env bash
# stop 39 device run 2: rope (pipelined tokens, resident grid or 16 blocks an SM) and layernorm_quant (staged next row) variants against the tree; CUDA tests on the variants.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
rm -f ab-base/variants/*; cp ab-base/rope/*.cu ab-base/variants/
REPS=2 tools/variants src/cuda/rope.cu '--ops rope --shapes 1x0,1024x0,2048x0,4096x0,8192x0,16384x0'
mv $OUT/variants.txt $OUT/rope-variants.txt
mkdir -p /tmp/keep; cp -r /tmp/variants/build-pipe16 /tmp/variants/build-pipe /tmp/keep/
rm -f ab-base/variants/*; cp ab-base/norm/*.cu ab-base/variants/
REPS=2 tools/variants src/cuda/norm.cu '--ops layernorm_quant --shapes 4096x16384,1024x16384,8192x12288,128x16384' \
  '--ops layernorm_quant --dtype float32 --shapes 4096x8192'
mv $OUT/variants.txt $OUT/norm-variants.txt
cd /tmp
(HETKERN_LIBRARY=/tmp/variants/build-stage/src/libhetkern.so PYTHONPATH=$R/python OMP_WAIT_POLICY=PASSIVE \
  timeout 150 python3 -m pytest -q -p no:cacheprovider -n 12 $R/tests/test_norm_quant.py $R/tests/test_norm.py -k "cuda or gpu" 2>&1 | tail -2 | sed "s/^/stage /"
 for v in pipe pipe16; do
  HETKERN_LIBRARY=/tmp/keep/build-$v/src/libhetkern.so PYTHONPATH=$R/python OMP_WAIT_POLICY=PASSIVE \
    timeout 60 python3 -m pytest -q -p no:cacheprovider -n 8 $R/tests/test_rope.py -k "cuda or gpu" 2>&1 | tail -1 | sed "s/^/$v /"
 done) | tee $OUT/variant-tests.txt
