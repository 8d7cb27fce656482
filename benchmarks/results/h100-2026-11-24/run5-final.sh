#!/usr/bin/env bash
# Device run 5, the final tree. `tests`: build, every CUDA test, memcheck and racecheck.
# `bench`: graph_probe of every norm op, the gated ops and softmax (reuses a warm machine's build).
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers XLA_PYTHON_CLIENT_PREALLOCATE=false
step() { echo "=== $* ($(date +%T))"; }
step build
if [ "$1" = bench ] && [ -f /tmp/hetkern-built-$(cat .probe/tree-id) ]; then echo "kept the installed build"; else
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
touch /tmp/hetkern-built-$(cat .probe/tree-id); fi
cd /tmp; python3 -m hetkern >$OUT/info.txt; tail -4 $OUT/info.txt
if [ "$1" = tests ]; then
  step pytest CUDA
  timeout 240 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests -k "cuda or gpu or cupy or jax" >$OUT/pytest.log 2>&1; echo "rc $?"; tail -3 $OUT/pytest.log
  step memcheck
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_opinfo.py -k "cuda and (norm or softmax) and not 6553 and not 6554" >$OUT/sanitizer-memcheck.log 2>&1
  echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|passed|failed' $OUT/sanitizer-memcheck.log | tr '\n' ' ')"
  step racecheck
  timeout 130 compute-sanitizer --tool racecheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_norm_quant.py $R/tests/test_softmax.py -k "cuda and bfloat16 and (test_rmsnorm_quant or test_fused_add_rmsnorm_quant or test_layernorm_quant or vocabulary)" >$OUT/sanitizer-racecheck.log 2>&1
  echo "racecheck rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' $OUT/sanitizer-racecheck.log | tr '\n' ' ')"
else
  step pytest jax
  timeout 150 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests -k "jax" >$OUT/pytest-jax.log 2>&1; echo "rc $?"; tail -2 $OUT/pytest-jax.log
  step graph_probe norms
  timeout 170 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,fused_add_rmsnorm,gemma_rmsnorm,gemma_fused_add_rmsnorm,layernorm,rmsnorm_quant,fused_add_rmsnorm_quant,layernorm_quant >$OUT/graph_probe-norms.txt 2>&1; echo "rc $?"
  step graph_probe gated, softmax
  timeout 150 python3 $R/benchmarks/graph_probe.py --ops silu_and_mul,gelu_and_mul,gelu_tanh_and_mul,softmax,log_softmax >$OUT/graph_probe-gated-softmax.txt 2>&1; echo "rc $?"
  grep -v "^  " $OUT/graph_probe-*.txt | awk '{print $1,$2,$3,$4,$(NF-1),$NF}'
fi
step done
