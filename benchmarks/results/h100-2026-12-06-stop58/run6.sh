#!/usr/bin/env bash
# stop 58 device run 6, prepared but not run (no device time was left to
# start a machine). An experiment, not a change for main: C = A +
# log1p-in-compute-type.diff (built with meson as A was), which takes
# log_softmax's log1p of the sum in the compute type (float32 for float32
# and 16-bit rows) instead of float64 (ExpSum::Scale). It asks whether that
# float64 tail keeps float32 log_softmax 1x151936 behind softmax and
# torch.compile. A C A C, graph replay; carry .gpu-carry with A and C in ab/.
export R=$PWD
mkdir -p /tmp/ab && for s in A C; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
source .gpu-carry/setup.sh > /dev/null
export PYTHONPATH=$R/python HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
cd /tmp
nvidia-smi -L > "$OUT/machine.txt"
for side in A C A C; do
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 40 python3 "$R/benchmarks/graph_probe.py" --dtype float32 \
    --ops log_softmax,softmax --shapes 1x151936,1x128256,32x151936,1x32000 2>&1 | sed "s/^/$side /"
done | tee "$OUT/ac.txt" | grep -E "^[AC] (log_)?softmax" | awk '{print $1, $2, $4, $5, $6}'
