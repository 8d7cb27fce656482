#!/usr/bin/env bash
# One device call for G (G.diff: the online softmax kernel takes a cluster
# of 2-8 blocks a row for many long rows too, where one block a row would
# put more than half of L2 between a value's two reads). Prepared at stop
# 66 and not run there (the session's device time was spent). M = main's
# library (stop 66's F.so.xz, or prepare.sh's M), G = main + G.diff.
# 1. graph replay, M against G, twice: float32 rows the online kernel takes
#    (4096 x 128256 ran at 0.66 of a copy), bfloat16 rows past the
#    shared-memory kernel, and shapes that must not move;
# 2. G's softmax CUDA tests;
# 3. memcheck and racecheck over the softmax row kernels on G (the
#    workload gains 140 rows of 90000: float32 online rows on clusters).
# Carry: .gpu-carry/{setup.sh,whl,peers,ab} with ab holding M and G.
#   M=F bash benchmarks/results/unmeasured-2026-12-07-stop66-softmax-l2/run.sh
set -uo pipefail
M=${M:-M}
export PROBE_TIMEOUT=90
source tools/device-ab-env.sh "$M" G
for round in 1 2; do for side in $M G; do
  probe $side --buffers 2 --dtype float32 --ops softmax,log_softmax --shapes 4096x128256,1024x100000,256x262144,140x90000
  probe $side --buffers 2 --ops softmax,log_softmax --shapes 2048x200000,512x262144,4096x128256,1x151936,32x128256
done; done >> "$OUT/ab-G.txt" 2>&1
lap "softmax shapes"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/G.so OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_softmax.py" -k cuda > "$OUT/cuda-pytest-G.txt" 2>&1
 echo "G softmax tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-G.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
git apply --include='tools/*' benchmarks/results/unmeasured-2026-12-07-stop66-softmax-l2/G.diff  # the workload's new rows
for tool in memcheck racecheck; do sanitize G $tool softmax; done
lap sanitized
