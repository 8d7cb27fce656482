#!/usr/bin/env bash
# Stop 68, device call 1: M = main (a9fe3c2) against
#   I: the clustered shared softmax kernel two 512-thread blocks an SM
#      (stop 67's I.diff, prepared there, unmeasured);
#   J: fused_add_rmsnorm_quant's 16-bit rows of 4 cached packs a thread
#      (x 12289-16384) streamed instead (J.diff);
#   L: layernorm_quant's large calls 1 row tile a block
#      instead of 4 (L.diff; K, 2 tiles, built but left out: the carry limit).
# Graph replay, two rounds; then I's softmax CUDA tests and memcheck and
# racecheck over the softmax row kernels on I.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab} with ab holding I J L M.
set -uo pipefail
export PROBE_TIMEOUT=90
source tools/device-ab-env.sh M I J L
round() {
  for side in M I; do
    probe $side --buffers 2 --dtype float32 --ops softmax,log_softmax --shapes 4096x128256,1024x100000,140x90000,67x200000
    probe $side --buffers 2 --ops softmax,log_softmax --shapes 2048x200000,140x155656,4096x128256
  done >> "$OUT/ab-I.txt" 2>&1
  for side in M J; do
    probe $side --buffers 4 --ops fused_add_rmsnorm_quant --shapes 16384x16384,4096x16384,8192x12288,128x16384,1x16384
  done >> "$OUT/ab-J.txt" 2>&1
  for side in M L; do
    probe $side --buffers 4 --ops layernorm_quant,rmsnorm_quant --shapes 16384x4096,16384x2048,16384x8192,16384x16384
  done >> "$OUT/ab-KL.txt" 2>&1
}
round
lap "round 1"
round
lap "round 2"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/I.so OMP_WAIT_POLICY=PASSIVE timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_softmax.py" -k cuda > "$OUT/cuda-pytest-I.txt" 2>&1
 echo "I softmax tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-I.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
lap tested
SANITIZE_TIMEOUT=150
for tool in memcheck racecheck; do sanitize I $tool softmax; done
lap sanitized
