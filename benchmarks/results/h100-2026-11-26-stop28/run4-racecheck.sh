#!/usr/bin/env bash
# Device run 4 of stop 28: racecheck (and memcheck) over the final tree's
# reduction tests (the batched segments' shared-memory exchange) and the
# norm tests' whole-SM rows, which run 3's 110 s limit cut short.
# Usage on the device: bash <this> (carry .gpu-carry).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/work; mkdir -p $W
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $W/build.log 2>&1 || { tail -30 $W/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
san() {  # tool, name, pytest args...
  local tool=$1 name=$2; shift 2
  timeout 200 compute-sanitizer --tool "$tool" --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider "$@" > "$W/$tool-$name.log" 2>&1
  echo "$tool $name: exit $? ; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$W/$tool-$name.log" | tr '\n' ' ')" | tee -a $OUT/sanitizers.txt
}
san racecheck reduce "$R/tests/test_reduce.py" -k "cuda_huge or cuda_matches_torch"
san racecheck norm "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" -k "(cuda_matches_reference and float32) or (cuda and (8196 or 32768))"
echo "total $(( $(date +%s)-t0 )) s"
