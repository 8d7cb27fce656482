#!/usr/bin/env bash
# stop 58 device run 5 (the session's last device seconds): which launch
# shape main's softmax kernels take at the float32 rows that trail their peers
# in run 4's table (log_softmax 1x151936 at 0.86 of torch.compile, softmax
# 64x32000 at 0.89 of Liger) and bfloat16 softmax 64x32000 (0.97): Nsight
# Compute's launch statistics and occupancy of one call each (library A).
export R=$PWD
mkdir -p /tmp/ab && { [ -f /tmp/ab/A.so ] || xz -dc .gpu-carry/ab/A.so.xz > /tmp/ab/A.so; }
source .gpu-carry/setup.sh > /dev/null
export HETKERN_LIBRARY=/tmp/ab/A.so PYTHONPATH=$R/python
cd /tmp
for c in "float32 log_softmax 1x151936" "float32 softmax 1x151936" "float32 softmax 64x32000" \
         "bfloat16 softmax 64x32000"; do
  set -- $c
  timeout 40 ncu --clock-control none -k regex:'RowsKernel' --launch-skip 1 --launch-count 1 \
    --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats \
    python3 "$R/benchmarks/graph_probe.py" --ncu --dtype $1 --ops $2 --shapes $3 > "$OUT/ncu-$1-$2-$3.txt" 2>&1
  echo "$c rc=$?: $(grep -E 'RowsKernel|Duration|Registers Per|Cluster Size|Grid Size|Block Size' "$OUT/ncu-$1-$2-$3.txt" | tr -s ' ' | tr '\n' ';' | cut -c1-600)"
done
