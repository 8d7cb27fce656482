#!/bin/bash
# Device run: probe (during the build), build, tests, memcheck, graph_probe. From .dev-gsoft.
set -uo pipefail
R=$PWD
step() { echo "=== $* ($(date +%T))"; }
source .gpu-carry/setup.sh >/dev/null || { echo setup failed; exit 1; }
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
(probe/probe all > $OUT/probe.txt 2>&1; echo "probe rc $?" >> $OUT/probe.txt) &
step build
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
wait
step tests
cd /tmp
python3 -m hetkern > $OUT/info.txt 2>&1
T=$R/tests
timeout ${TEST_S:-150} python3 -m pytest -q -ra -p no:cacheprovider -n 8 $T/test_softmax.py $T/test_activation.py $T/test_strided.py $T/test_large.py $T/test_elementwise.py $T/test_scale.py "$T/test_opinfo.py" -k "not test_opinfo or softmax or and_mul or scale or add" > $OUT/pytest.log 2>&1; echo "pytest rc $?"; tail -8 $OUT/pytest.log
step graph_probe
timeout ${PROBE_S:-120} python3 $R/benchmarks/graph_probe.py --ops ${OPS:-softmax,log_softmax,silu_and_mul,gelu_and_mul,gelu_tanh_and_mul,scale,add} > $OUT/graph_probe.txt 2>&1; echo "graph_probe rc $?"
step memcheck
timeout ${SAN_S:-100} compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $T/test_softmax.py $T/test_activation.py -k "cuda and (special or dominating or vocabulary or many_long or gated or and_mul)" > $OUT/memcheck.log 2>&1; echo "memcheck rc $?"; grep -E "ERROR SUMMARY|passed|failed" $OUT/memcheck.log | tail -3
step done
cat $OUT/probe.txt
