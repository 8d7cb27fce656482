#!/bin/bash
# alternate the library before the split bfloat16 sum/dot groups (presum = 578023f's build) and after
cd /work/main
for rep in 1 2 3; do for name in presum new; do
  L=$([ $name = presum ] && echo /tmp/s41/presum.so || echo $PWD/build-cpu/src/libhetkern.so)
  for threads in 1 2; do
    HETKERN_LIBRARY=$L PYTHONPATH=$PWD/python .venv/bin/python benchmarks/graph_probe.py --device cpu --threads $threads --dtype bfloat16 \
      --ops sum,dot --shapes 1x65536,1x1048576,1x4194304,1024x1024,64x32000 2>&1 | grep -v Warn | sed "s/^/$name /"
  done
done; done
