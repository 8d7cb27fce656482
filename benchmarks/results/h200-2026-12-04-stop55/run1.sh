#!/usr/bin/env bash
# stop 55 device run 1: bfloat16 erf-GELU of large calls from a shared-memory
# table (GeluBf16TableKernel, src/cuda/activation.cu). tools/gpu-ab: A = the
# file at 1a277b7 (the formula for every call), B = the tree; graph replay,
# 4 input sets, A B A B. Then the new test and the call-size test of gelu
# under memcheck and racecheck (the table is shared memory), on B.
set -uo pipefail
R=$PWD
t0=$(date +%s)
timeout 420 tools/gpu-ab run \
  '--ops gelu --shapes 1x1048576,1x2097152,1x4194304,1x8388608,1x16777216,1x67108864,1x268435456 --buffers 4' \
  '--ops gelu_tanh,silu --shapes 1x67108864 --buffers 4'
echo "gpu-ab rc=$? $(( $(date +%s) - t0 )) s"
source .gpu-carry/setup.sh >/dev/null
cd /tmp
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_activation.py" -k "gelu_table_every_pattern or (call_size and gelu and bfloat16)" \
    > "$OUT/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
