#!/bin/bash
# alternate the library before the 16-bit max keys (premax = a50e623's build) and after, 1 thread
cd /work/main
for rep in 1 2 3; do for name in premax new; do
  L=$([ $name = premax ] && echo /tmp/s41/premax.so || echo $PWD/build-cpu/src/libhetkern.so)
  for dt in bfloat16 float16; do
    HETKERN_LIBRARY=$L PYTHONPATH=$PWD/python .venv/bin/python benchmarks/graph_probe.py --device cpu --threads 1 --dtype $dt \
      --ops max --shapes 1x65536,1x1048576,1x4194304,1024x1024,64x32000 2>&1 | grep -v Warn | sed "s/^/$name /"
  done
done; done
