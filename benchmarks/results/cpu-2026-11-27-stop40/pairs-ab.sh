#!/bin/bash
# alternate base/new CPU libs on bf16 elementwise ops, 1 thread
cd /work/main
for rep in 1 2 3; do
for name in base new; do
  lib=$([ $name = base ] && echo /tmp/base/build-cpu/src/libhetkern.so || echo $PWD/build-cpu/src/libhetkern.so)
  HETKERN_LIBRARY=$lib PYTHONPATH=$PWD/python .venv/bin/python benchmarks/graph_probe.py --device cpu --threads 1 --dtype bfloat16 \
    --ops scale,add,div,gelu,silu_and_mul --shapes 1x1048576,1x4194304 2>&1 | grep -v Warn | sed "s/^/$name /"
done; done
