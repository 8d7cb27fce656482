#!/usr/bin/env bash
# stop 41 device run 3: the final CPU library of this stop (built on the 2-core machine, CPU-only) under the
# CPU tests of the files this stop touched, over every target of the 16-core host (AVX3_SPR included).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
cd /tmp
HETKERN_LIBRARY=$R/ab-base/libs/new.so PYTHONPATH=$R/python python3 -m hetkern | grep -E "library|targets|in use"
HETKERN_LIBRARY=$R/ab-base/libs/new.so PYTHONPATH=$R/python OMP_WAIT_POLICY=PASSIVE timeout 400 python3 -m pytest -q -p no:cacheprovider -n 14 \
  $R/tests/test_reduce.py $R/tests/test_norm.py $R/tests/test_softmax.py $R/tests/test_elementwise.py > $OUT/pytest.txt 2>&1
echo "pytest rc=$?"; tail -2 $OUT/pytest.txt
echo "done $(( $(date +%s)-t0 )) s"
