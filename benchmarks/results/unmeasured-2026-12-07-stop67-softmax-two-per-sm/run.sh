#!/usr/bin/env bash
# One device call for I (I.diff, prepared at stop 67, not run: the session's
# device time was spent). Main's clustered shared softmax kernel (stop 67's
# H: one 1024-thread block an SM, a cluster of 2 or 4 a row) reached 0.85 of
# a copy at float32 4096x128256; I prefers the cluster size whose 512-thread
# blocks run two an SM (4 for float32 x 128256 and x 90000, for 16-bit
# x 200000), so that one block's cluster barriers overlap the other's
# memory traffic, and asks the occupancy at every call with the call's
# shared memory (it now depends on it).
# H = main's library (.gpu-carry/ab/H.so.xz, stop 67: main's src but for
# comments), I = main + I.diff.
# 1. I's softmax CUDA tests; 2. graph replay, H against I, round 1;
# 3. memcheck and racecheck over the softmax row kernels on I; 4. round 2.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab} with ab holding H and I.
#   bash benchmarks/results/unmeasured-2026-12-07-stop67-softmax-two-per-sm/run.sh
set -uo pipefail
export PROBE_TIMEOUT=90
source tools/device-ab-env.sh H I
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/I.so OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_softmax.py" -k cuda > "$OUT/cuda-pytest-I.txt" 2>&1
 echo "I softmax tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-I.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
lap tested
round() {
  for side in H I; do
    probe $side --buffers 2 --dtype float32 --ops softmax,log_softmax --shapes 4096x128256,1024x100000,256x262144,140x90000,67x200000
    probe $side --buffers 2 --ops softmax,log_softmax --shapes 2048x200000,512x262144,140x155656,4096x128256
  done >> "$OUT/ab-I.txt" 2>&1
}
round
lap "round 1"
for tool in memcheck racecheck; do sanitize I $tool softmax; done
lap sanitized
round
lap "round 2"
