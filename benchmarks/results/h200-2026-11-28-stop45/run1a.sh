#!/usr/bin/env bash
# stop 45 device run 1a (H200): install main (sm_90), the whole CUDA test
# suite (covers stop 44's CachedPerDevice refactor, which no device run has
# tested), then memcheck and racecheck over the op table's bfloat16 norm and softmax CUDA cases (the kernels that use the cache) and the
# stream/graph tests.
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
echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/cuda-pytest.txt"
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_opinfo.py" "$R/tests/test_concurrency.py" -k "cuda and not 6553 and not 6554 and (norm or softmax) and bfloat16" \
    > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s"; grep -E 'ERROR SUMMARY|passed|failed' "$OUT/$tool.txt" | tail -3
done
