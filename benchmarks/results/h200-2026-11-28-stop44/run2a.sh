#!/usr/bin/env bash
# stop 44 device run 2a (H200): A/B of softmax.cu. tree = float32 rows of
# 131K-262K values on 16-block clusters where they fit, 512-thread 8-pack
# float32 clusters two an SM (64 registers) past one wave, 2-block clusters
# for 33-66 rows of 16K-32K values; head = HEAD's file. Then torch.compile
# on the single float32 vocabulary rows, tree's library.
set -uo pipefail
R=$PWD
t0=$(date +%s)
F32='--dtype float32 --ops softmax,log_softmax --shapes 1x151936,4x151936,8x151936,24x128256,32x128256,64x32000,48x32000,40x32000'
B16='--ops softmax,log_softmax --shapes 64x32000,48x32000,40x32000,1x151936'
REPS=2 timeout 420 tools/variants src/cuda/softmax.cu "$F32" "$B16" > "$OUT/softmax-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/softmax-log.txt"
source .gpu-carry/setup.sh >/dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH="$R/python"
cd /tmp
timeout 150 python3 "$R/benchmarks/graph_probe.py" --compile --dtype float32 --ops softmax,log_softmax \
  --shapes 1x151936,64x32000 2>&1 | tee "$OUT/compile-probe.txt"
echo "done $(( $(date +%s) - t0 )) s"
