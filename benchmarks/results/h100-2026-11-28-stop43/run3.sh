#!/usr/bin/env bash
# stop 43 device run 3: A/B of softmax.cu (tree: run 1's tree with two waves
# of clusters for float32 only, log_softmax's two sums in one cluster
# reduction, its sum pass by select, and the online kernel's softmax by 1 / sum;
# merged: the same but the select; head: HEAD's file), one pass each;
# then the softmax and rope CUDA tests on the tree's library, racecheck over
# the float32 cluster-kernel tests and memcheck over all of them.
set -uo pipefail
R=$PWD
t0=$(date +%s)
rm -rf ab-base/variants && cp -r ab-base/softmax-variants ab-base/variants
F32='--dtype float32 --ops softmax,log_softmax --shapes 1x32000,1x128256,1x151936,32x128256,32x151936'
B16='--ops log_softmax --shapes 1x128256,1x151936'
BIG='--buffers 4 --dtype float32 --ops softmax,log_softmax --shapes 256x128256,256x151936'
REPS=1 TESTS='cuda and (softmax or rope)' timeout 380 tools/variants src/cuda/softmax.cu "$F32" "$B16" "$BIG" \
  > "$OUT/softmax-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -4 "$OUT/softmax-log.txt"
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH="$R/python"
cd /tmp
for run in "racecheck 90 cuda and vocabulary and float32" "memcheck 110 cuda and vocabulary"; do
  set -- $run; tool=$1 limit=$2; shift 2
  timeout $limit compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_softmax.py" -k "$*" > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/$tool.txt"
done
