#!/usr/bin/env bash
# stop 55 device run 3: the landed form (a block a chunk; 1024 threads of 2
# packs, from ~35M values 512 threads of 4) against 1a277b7's formula,
# tools/gpu-ab, graph replay, 4 input sets, A B A B; then the table tests
# (both block shapes, every bit pattern) and gelu's call-size test under
# memcheck and racecheck, on B.
set -uo pipefail
R=$PWD
t0=$(date +%s)
timeout 360 tools/gpu-ab run \
  '--ops gelu --shapes 1x1048576,1x4194304,1x8388608,1x16777216,1x33554432,1x67108864,1x268435456 --buffers 4'
echo "gpu-ab rc=$? $(( $(date +%s) - t0 )) s"
source .gpu-carry/setup.sh >/dev/null
cd /tmp
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_activation.py" -k "gelu_table_every_pattern or (call_size and gelu and bfloat16)" \
    > "$OUT/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
