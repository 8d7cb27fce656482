#!/bin/bash
# alternate base (bcda0f8) and new CPU libs on bf16 norms and softmax, 1 and 2 threads
# (first run: new = 25e6186, split-ab.txt; second: new = da97a0f, split-ab-final.txt)
cd /work/main
for rep in 1 2 3; do
for name in base new; do
  lib=$([ $name = base ] && echo /tmp/s41/base.so || echo $PWD/build-cpu/src/libhetkern.so)
  for threads in 1 2; do
  HETKERN_LIBRARY=$lib PYTHONPATH=$PWD/python .venv/bin/python benchmarks/graph_probe.py --device cpu --threads $threads --dtype bfloat16 \
    --ops rmsnorm,fused_add_rmsnorm,layernorm,gemma_rmsnorm,gemma_fused_add_rmsnorm,softmax --shapes 1x4096,8x4096,128x4096,1024x4096,256x16384,1024x1024 2>&1 | grep -v Warn | sed "s/^/$name /"
  done
done; done
