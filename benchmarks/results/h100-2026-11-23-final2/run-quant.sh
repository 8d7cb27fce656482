#!/usr/bin/env bash
# Second call: the fp8 norms with the sm_89+ hardware e4m3 conversion (src/cuda/norm.cu StoreOutputs).
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
step() { echo "=== $* ($(date +%T))"; }
step build
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
step tests
timeout 60 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_norm_quant.py $R/tests/test_norm.py $R/tests/test_opinfo.py $R/tests/test_large.py -k "quant and (cuda or gpu)" >$OUT/pytest-quant.log 2>&1; echo "rc $?"; tail -2 $OUT/pytest-quant.log
timeout 40 env PYTHONPATH=$R/tools/flashinfer-shim python3 -m pytest -q -n 8 -p no:cacheprovider $R/fi-tests -k "quant or gelu_tanh" >$OUT/fi-tests-quant.log 2>&1; echo "rc $?"; grep -E '^E ' $OUT/fi-tests-quant.log | cut -c1-120 | sort | uniq -c | sort -rn | head -5; tail -1 $OUT/fi-tests-quant.log
step graph_probe
timeout 50 python3 $R/benchmarks/graph_probe.py --ops rmsnorm_quant,fused_add_rmsnorm_quant,layernorm_quant >$OUT/graph_probe-quant.txt 2>&1; echo "rc $?"; cat $OUT/graph_probe-quant.txt
step done
