#!/usr/bin/env bash
# fused_add_rmsnorm_quant storing T(sum) in the first pass (cached rows).
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
echo "=== build $(date +%T)"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
echo "=== graph_probe $(date +%T)"
timeout 40 python3 $R/benchmarks/graph_probe.py --ops fused_add_rmsnorm_quant >$OUT/graph_probe.txt 2>&1; echo rc $?; grep -v "^  " $OUT/graph_probe.txt
echo "=== tests $(date +%T)"
timeout 90 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_norm_quant.py $R/tests/test_norm.py $R/tests/test_opinfo.py $R/tests/test_strided.py $R/tests/test_large.py -k "fused_add and (cuda or gpu)" >$OUT/pytest.log 2>&1; echo rc $?; tail -2 $OUT/pytest.log
echo "=== done $(date +%T)"
