#!/usr/bin/env bash
# The merged tree on the H100. `tests`: build, CUDA tests, memcheck and racecheck on the
# changed kernels (norms). `bench`: build, graph_probe of every norm op, the CPU activation
# tables' tests on this host (AVX3_SPR).
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers XLA_PYTHON_CLIENT_PREALLOCATE=false
step() { echo "=== $* ($(date +%T))"; }
step build
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp; python3 -m hetkern >$OUT/info.txt; tail -5 $OUT/info.txt
if [ "$1" = tests ]; then
  step pytest CUDA
  timeout 230 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests -k "cuda or gpu or cupy or jax" >$OUT/pytest.log 2>&1; echo "rc $?"; tail -4 $OUT/pytest.log
  step memcheck
  timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_opinfo.py -k "cuda and norm and not 6553 and not 6554" >$OUT/sanitizer-memcheck.log 2>&1
  echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|passed|failed' $OUT/sanitizer-memcheck.log | tr '\n' ' ')"
  step racecheck
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_norm_quant.py -k "cuda and (test_rmsnorm_quant or test_fused_add_rmsnorm_quant or test_layernorm_quant) and bfloat16" >$OUT/sanitizer-racecheck.log 2>&1
  echo "racecheck rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' $OUT/sanitizer-racecheck.log | tr '\n' ' ')"
else
  step graph_probe
  timeout 150 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,fused_add_rmsnorm,gemma_rmsnorm,gemma_fused_add_rmsnorm,layernorm,rmsnorm_quant,fused_add_rmsnorm_quant,layernorm_quant >$OUT/graph_probe.txt 2>&1; echo "rc $?"; grep -v "^  " $OUT/graph_probe.txt | awk '{print $1,$2,$3,$4,$(NF-1),$NF}'
  step activation tables on this CPU
  timeout 90 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_activation_table.py >$OUT/pytest-activation-table.log 2>&1; echo "rc $?"; tail -3 $OUT/pytest-activation-table.log
fi
step done
