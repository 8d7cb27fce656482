#!/usr/bin/env bash
# Run 7, after `TESTS=1 tools/gpu-ab run ...` (A: predicated register loads;
# B: + shared slots read whole, the final softmax.cu, installed with pip and
# tested): compute-sanitizer memcheck and racecheck over the CUDA softmax
# tests on B.
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
cd /tmp
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_softmax.py" -k "cuda and (many_long_rows or far_from_zero)" -x 2>&1 | tail -4 | tee "$OUT/$tool.txt"
  echo "$tool: exit ${PIPESTATUS[0]}"
done
