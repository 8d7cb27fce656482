#!/usr/bin/env bash
# Device run 5 of stop 27, the host CPU only (Intel AVX3_SPR): does float32
# division (vdivps) or DivBounded's reciprocal + Newton + correction win on
# the AVX2 and AVX3 targets? Two libraries built on the 2-core AMD machine
# (.gpu-carry/ab: lib_cur = as shipped, lib_div = AVX2 divides), alternated.
set -uo pipefail
source .gpu-carry/setup.sh > /dev/null || exit 1
export PYTHONPATH=$PWD/python
lscpu | grep -E "Model name" > $OUT/div-probe.txt
for rep in 1 2; do
  for cfg in "cur AVX2" "div AVX2" "cur AVX3_SPR" "cur AVX3_DL" "cur AVX3_ZEN4"; do
    set -- $cfg
    HETKERN_LIBRARY=.gpu-carry/ab/lib_$1.so python3 benchmarks/results/h100-2026-11-25-stop27/div_probe.py $2 "lib_$1" 2>&1 | tail -1
  done
done | tee -a $OUT/div-probe.txt
