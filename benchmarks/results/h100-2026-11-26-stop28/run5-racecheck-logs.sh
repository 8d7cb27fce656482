#!/usr/bin/env bash
# Device run 5 of stop 28: run 4's racecheck hazards, with the reports kept:
# the final tree (installed by run 4 on the warm machine, else installed
# again) and HEAD's norm.cu/reduce.cu (ab-base/ holds HEAD's files for this
# run), so that hazards of torch's reference kernels or older code show.
# Usage on the device: bash <this> (carry .gpu-carry).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/work; mkdir -p $W
t0=$(date +%s)
rm -rf /tmp/base /tmp/bA && cp -r "$R" /tmp/base && cp -r "$R"/ab-base/src/. /tmp/base/src/ && rm -rf /tmp/base/ab-base
(cd /tmp/base && meson setup /tmp/bA -Dgpu_archs=90 --buildtype=release > $W/setupA.log 2>&1 && ninja -C /tmp/bA > $W/buildA.log 2>&1; echo "A: $?") &
(cd /tmp && python3 -c "import hetkern" 2>/dev/null && echo "B: kept" || { cd "$R" && python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $W/build.log 2>&1; echo "B (pip): $?"; }) &
wait
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
san() {  # lib, tool, name, pytest args...
  local lib=$1 tool=$2 name=$3; shift 3
  if [ $lib = A ]; then export HETKERN_LIBRARY=/tmp/bA/src/libhetkern.so; else unset HETKERN_LIBRARY; fi
  timeout 150 compute-sanitizer --tool "$tool" --print-limit 4 python3 -m pytest -q -p no:cacheprovider -x "$@" > "$W/$lib-$tool-$name.log" 2>&1
  echo "$lib $tool $name: exit $? ; $(grep -E 'RACECHECK SUMMARY|passed|failed' "$W/$lib-$tool-$name.log" | tr '\n' ' ')" | tee -a $OUT/sanitizers.txt
  grep -E "Race reported|Write Thread|Read Thread|at .*(Kernel|kernel|reduce)" "$W/$lib-$tool-$name.log" | sort | uniq -c | sort -rn | head -12 | sed "s/^/    /" | tee -a $OUT/sanitizers.txt
}
san B racecheck norm "$R/tests/test_norm.py" -k "cuda_matches_reference and float32"
san A racecheck norm "$R/tests/test_norm.py" -k "cuda_matches_reference and float32"
san B racecheck reduce "$R/tests/test_reduce.py" -k "cuda_matches_torch and float32"
san A racecheck reduce "$R/tests/test_reduce.py" -k "cuda_matches_torch and float32"
cp $W/*racecheck*.log $OUT/ 2>/dev/null; ls $OUT
echo "total $(( $(date +%s)-t0 )) s"
