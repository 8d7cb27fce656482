#!/usr/bin/env bash
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 $R/tests/test_softmax.py $R/tests/test_opinfo.py -k "cuda and (softmax or few_rows)" > $OUT/pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 )) s: $(tail -n 1 $OUT/pytest.txt)"
for tool in memcheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_softmax.py -k "cuda and few_rows and bfloat16" > $OUT/sanitizer-$tool.log 2>&1
  echo "$tool rc=$? $(( $(date +%s)-t0 )) s: $(grep -E 'SUMMARY|passed|failed' $OUT/sanitizer-$tool.log | tr '\n' ' ')"
done
python3 -m hetkern.bench --device cuda --family softmax --samples 9 --gpu-max 64M --dtypes bfloat16 --time-cap 70 --out /tmp/hb > $OUT/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s)-t0 )) s"
grep -E "^(softmax|log_softmax) .*(1x1048576|4x4194304|1x151936|32x151936)" $OUT/bench.txt | sed 's/\s\+/ /g' | sed 's/ | graph:/\n   graph:/'
