#!/usr/bin/env bash
# Run 6, after `tools/gpu-ab run ...` (A: the predicated register loads,
# LoadIf; B: the same with the shared slots stored and reloaded before the
# register packs): warp-stall sampling (SASS) of hetkern's softmax
# 4096x32000, A in bfloat16 and float16 (A's bfloat16 kernel got slower with
# LoadIf, 201 -> 210 us, float16's did not), B in bfloat16.
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
cd /tmp
for run in A-bfloat16 A-float16 B-bfloat16; do
  dtype=${run#*-}
  if [ ${run%%-*} = A ]; then export HETKERN_LIBRARY=/tmp/gpu-ab/build-a/src/libhetkern.so PYTHONPATH=$R/python; else unset HETKERN_LIBRARY PYTHONPATH; fi
  timeout 150 ncu --set full --import-source no --kernel-name regex:"SharedRows" --launch-skip 0 --launch-count 1 \
    -o /tmp/pc-$run -f python3 "$R/benchmarks/graph_probe.py" --ncu --ops softmax --shapes 4096x32000 --dtype $dtype \
    > /tmp/ncu-$run.log 2>&1
  echo "ncu $run: exit $?"; tail -2 /tmp/ncu-$run.log
  ncu --import /tmp/pc-$run.ncu-rep --page source --print-source sass --csv | gzip > "$OUT/source-$run.csv.gz"
done
