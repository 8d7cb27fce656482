#!/usr/bin/env bash
# One device call for H (H.diff: the shared softmax kernel on clusters of 2
# or 4 one-an-SM blocks a row, for many rows past one SM, which took the
# online kernel). F = main's library (.gpu-carry/ab/F.so.xz), H = main + H.diff.
# 1. a fresh process whose first such call is made in a graph capture;
# 2. H's softmax CUDA tests;
# 3. graph replay, F against H, round 1: the shapes H moves and some it must not;
# 4. memcheck and racecheck over the softmax row kernels on H;
# 5. round 2.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab}.
#   bash benchmarks/results/h100-2026-12-07-stop67/H/run.sh
set -uo pipefail
export PROBE_TIMEOUT=90
H=benchmarks/results/h100-2026-12-07-stop67/H
source tools/device-ab-env.sh F H
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/H.so timeout 60 python3 "$R/$H/capture_first.py" > "$OUT/capture-first-H.txt" 2>&1
 echo "capture_first rc=$?: $(tail -n 1 "$OUT/capture-first-H.txt")") | tee -a "$OUT/laps.txt"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/H.so OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_softmax.py" -k cuda > "$OUT/cuda-pytest-H.txt" 2>&1
 echo "H softmax tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-H.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
lap tested
round() {
  for side in F H; do
    probe $side --buffers 2 --dtype float32 --ops softmax,log_softmax --shapes 4096x128256,1024x100000,256x262144,140x90000,67x200000,66x200000
    probe $side --buffers 2 --ops softmax,log_softmax --shapes 2048x200000,512x262144,140x155656,4096x128256,1x151936,32x128256,4096x32000
  done >> "$OUT/ab-H.txt" 2>&1
}
round
lap "round 1"
for tool in memcheck racecheck; do sanitize H $tool softmax; done
lap sanitized
round
lap "round 2"
