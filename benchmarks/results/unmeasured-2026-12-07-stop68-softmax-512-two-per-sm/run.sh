#!/usr/bin/env bash
# Prepared at stop 68, not run. N = main's library (.gpu-carry/ab/N.so.xz,
# stop 68's run 2; main since differs in comments only) against O (O.diff):
# many rows past one SM take 512-thread blocks two an SM wherever 2 or 4 of
# them hold the row, where main takes what the shared kernel's cost model
# picks (float32 x 128256 at 4096 rows: 2 blocks of 1024, one an SM, 0.85 of
# a copy). 1. O's softmax CUDA tests; 2. graph replay, N against O, twice;
# 3. memcheck and racecheck over the softmax row kernels on O.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab} with ab holding N and O.
#   bash benchmarks/results/unmeasured-2026-12-07-stop68-softmax-512-two-per-sm/run.sh
set -uo pipefail
export PROBE_TIMEOUT=90 SANITIZE_TIMEOUT=150
source tools/device-ab-env.sh N O
run_tests O 150 "$R/tests/test_softmax.py" -k cuda
lap tested
round() {
  for side in N O; do
    probe $side --buffers 2 --dtype float32 --ops softmax,log_softmax --shapes 4096x128256,1024x128256,140x128256,512x140000,1024x100000
    probe $side --buffers 2 --ops softmax,log_softmax --shapes 2048x250000,512x262144,2048x200000
  done >> "$OUT/ab-O.txt" 2>&1
}
round
lap "round 1"
for tool in memcheck racecheck; do sanitize O $tool softmax; done
lap sanitized
round
lap "round 2"
