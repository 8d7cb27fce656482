#!/usr/bin/env bash
# stop 47 device run 4 (H200): the final tree installed (sm_90); the whole
# CUDA test suite.
set -uo pipefail
R=$PWD
t0=$(date +%s)
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > "$OUT/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/build.log"
cd /tmp
python3 -m hetkern > "$OUT/info.txt" 2>&1
OMP_WAIT_POLICY=PASSIVE timeout 300 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" -k cuda \
  > "$OUT/cuda-pytest.txt" 2>&1
echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -4 "$OUT/cuda-pytest.txt"
