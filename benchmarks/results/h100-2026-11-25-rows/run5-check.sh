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
python3 -m hetkern > $OUT/info.txt
OMP_WAIT_POLICY=PASSIVE timeout 330 python3 -m pytest -q -ra -p no:cacheprovider -n 8 $R/tests -k "cuda or gpu or cupy or jax" > $OUT/pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 )) s: $(tail -n 1 $OUT/pytest.txt)"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_opinfo.py $R/tests/test_concurrency.py -k "cuda and not 6553 and not 6554" > $OUT/sanitizer-memcheck.log 2>&1
echo "memcheck rc=$? $(( $(date +%s)-t0 )) s: $(grep -E 'ERROR SUMMARY|passed|failed' $OUT/sanitizer-memcheck.log | tr '\n' ' ')"
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_opinfo.py -k "cuda and norm and not 6553 and not 6554" > $OUT/sanitizer-racecheck.log 2>&1
echo "racecheck rc=$? $(( $(date +%s)-t0 )) s: $(grep -E 'RACECHECK SUMMARY|passed|failed' $OUT/sanitizer-racecheck.log | tr '\n' ' ')"
