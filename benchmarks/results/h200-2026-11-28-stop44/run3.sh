#!/usr/bin/env bash
# stop 44 device run 3 (H200): A/B of softmax.cu. tree = float32 softmax's
# cluster and shared kernels keep each exp in place of its value (no exps
# in the output pass); head = b6c9199's file. Then the softmax CUDA tests on
# the tree's library, racecheck and memcheck over the cluster and shared
# kernel tests.
set -uo pipefail
R=$PWD
t0=$(date +%s)
F32='--dtype float32 --ops softmax --shapes 1x32000,32x32000,64x32000,1x151936,24x128256,32x151936,256x32000,1024x65536'
BIG='--buffers 4 --dtype float32 --ops softmax --shapes 4096x32000'
B16='--ops softmax --shapes 64x32000,1x151936'
REPS=2 TESTS='cuda and softmax' timeout 470 tools/variants src/cuda/softmax.cu "$F32" "$BIG" "$B16" > "$OUT/softmax-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/softmax-log.txt"
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH="$R/python"
cd /tmp
for run in "racecheck 60 cuda and float32 and not log and (vocabulary or many_long)" "memcheck 60 cuda and float32 and not log and (vocabulary or many_long)"; do
  set -- $run; tool=$1 limit=$2; shift 2
  timeout $limit compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_softmax.py" -k "$*" > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/$tool.txt"
done
