#!/usr/bin/env bash
# stop 41 device run 2: the split pairs on the 16-core host (AVX3_SPR), more carefully: the stand-alone
# layernorm/rmsnorm loops (vector vs split), pinned to one core, then the CPU-only libraries built here
# (base bcda0f8, new) alternated four times at 1 thread (pinned) and 16 threads. No hetkern build.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
for rep in 1 2; do taskset -c 3 $R/ab-base/ln_write; done > $OUT/ln_write.txt 2>&1
echo "ln_write done $(( $(date +%s)-t0 )) s"; grep "rows  128 pass [34]" $OUT/ln_write.txt
cd /tmp
for rep in 1 2 3 4; do for name in base new; do
  HETKERN_LIBRARY=$R/ab-base/libs/$name.so PYTHONPATH=$R/python taskset -c 3 timeout 60 python3 $R/benchmarks/graph_probe.py --device cpu --threads 1 --dtype bfloat16 \
    --ops rmsnorm,fused_add_rmsnorm,layernorm --shapes 8x4096,128x4096,1024x4096,256x16384 2>&1 | grep -v Warn | sed "s/^/$name /"
  HETKERN_LIBRARY=$R/ab-base/libs/$name.so PYTHONPATH=$R/python timeout 60 python3 $R/benchmarks/graph_probe.py --device cpu --threads 16 --dtype bfloat16 \
    --ops rmsnorm,fused_add_rmsnorm,layernorm --shapes 128x4096,1024x4096,256x16384 2>&1 | grep -v Warn | sed "s/^/$name /"
done; done > $OUT/ab.txt
echo "ab done $(( $(date +%s)-t0 )) s"; grep -c hetkern= $OUT/ab.txt
