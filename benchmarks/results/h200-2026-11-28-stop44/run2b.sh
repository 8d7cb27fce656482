#!/usr/bin/env bash
# stop 44 device run 2b (same machine, after 2a): the whole CUDA test suite on
# run 2a's tree library, then racecheck and memcheck over the softmax
# cluster-kernel tests.
set -uo pipefail
R=$PWD
t0=$(date +%s)
[ -f /tmp/variants/build-tree/src/libhetkern.so ] || { echo "no tree library: run 2a first"; exit 1; }
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH="$R/python"
cd /tmp
OMP_WAIT_POLICY=PASSIVE timeout 330 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" -k cuda \
  > "$OUT/cuda-pytest.txt" 2>&1
echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/cuda-pytest.txt"
for run in "racecheck 90 cuda and vocabulary and float32" "memcheck 110 cuda and vocabulary"; do
  set -- $run; tool=$1 limit=$2; shift 2
  timeout $limit compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_softmax.py" -k "$*" > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/$tool.txt"
done
