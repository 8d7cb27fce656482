#!/usr/bin/env bash
# The merged tree on the H100, one call: build, CUDA tests, FlashInfer's own norm/activation tests
# through tools/flashinfer-shim, graph_probe of every norm op, racecheck/memcheck on the changed kernels.
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers XLA_PYTHON_CLIENT_PREALLOCATE=false
step() { echo "=== $* ($(date +%T))"; }
step build
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp; python3 -m hetkern >$OUT/info.txt; tail -4 $OUT/info.txt
step pytest CUDA
timeout 205 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests -k "cuda or gpu or cupy or jax" >$OUT/pytest.log 2>&1; echo "rc $?"; tail -4 $OUT/pytest.log
step flashinfer tests
timeout 80 env PYTHONPATH=$R/tools/flashinfer-shim python3 -m pytest -q -n 8 -p no:cacheprovider -rf $R/fi-tests >$OUT/fi-tests.log 2>&1; echo "rc $?"; grep -E '^FAILED' $OUT/fi-tests.log | sed 's/\[.*//' | sort | uniq -c; tail -1 $OUT/fi-tests.log
step graph_probe
timeout 120 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,fused_add_rmsnorm,gemma_rmsnorm,gemma_fused_add_rmsnorm,layernorm,rmsnorm_quant,fused_add_rmsnorm_quant,layernorm_quant >$OUT/graph_probe.txt 2>&1; echo "rc $?"; wc -l <$OUT/graph_probe.txt
step sanitizers
for tool in memcheck racecheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider -x $R/tests/test_opinfo.py -k "cuda and (norm or softmax or and_mul or scale) and not 6553 and not 6554" >$OUT/sanitizer-$tool.log 2>&1
  echo "$tool rc $?: $(grep -E 'ERROR SUMMARY|passed|failed' $OUT/sanitizer-$tool.log | tr '\n' ' ')"
done
step done
