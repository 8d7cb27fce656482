#!/usr/bin/env bash
# stop 62 device run 3 (the same warm H200 as run 2): F's softmax, registry
# and bad-input CUDA tests, which run 2's cut test run may have left out.
source .gpu-carry/setup.sh > /dev/null 2>&1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && xz -dc .gpu-carry/ab/F.so.xz > /tmp/ab/F.so
R=$PWD
cd /tmp && HETKERN_LIBRARY=/tmp/ab/F.so PYTHONPATH=$R/python OMP_WAIT_POLICY=PASSIVE timeout 150 \
  python3 -m pytest -q -p no:cacheprovider -n 15 "$R/tests/test_softmax.py" "$R/tests/test_registry.py" \
  "$R/tests/test_bad_inputs.py" -k "cuda or gpu" 2>&1 | tail -3 | tee "$OUT/softmax-pytest-F.txt"
