#!/usr/bin/env bash
# Stop 67's last device seconds (264 s left): H against I, graph replay, no
# tests or sanitizers (run.sh has them), rounds until the call is stopped.
set -uo pipefail
export PROBE_TIMEOUT=60
source tools/device-ab-env.sh H I
for round in 1 2 3; do
  for side in H I; do
    probe $side --buffers 2 --dtype float32 --ops softmax,log_softmax --shapes 4096x128256,140x90000,67x200000
    probe $side --buffers 2 --ops softmax --shapes 2048x200000,140x155656
  done >> "$OUT/ab-I.txt" 2>&1
  lap "round $round"
done
