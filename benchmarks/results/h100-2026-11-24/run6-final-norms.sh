#!/usr/bin/env bash
# Device runs 6 and 8, the tree of each: build, the norm
# CUDA tests, memcheck/racecheck on the norms, graph_probe of every norm op.
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers XLA_PYTHON_CLIENT_PREALLOCATE=false
step() { echo "=== $* ($(date +%T))"; }
step build
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp; python3 -m hetkern >$OUT/info.txt; tail -3 $OUT/info.txt
step pytest norms
timeout 200 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests -k "(cuda or gpu or jax) and norm" >$OUT/pytest-norms.log 2>&1; echo "rc $?"; tail -2 $OUT/pytest-norms.log
step memcheck
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_opinfo.py -k "cuda and norm and not 6553 and not 6554" >$OUT/sanitizer-memcheck.log 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|passed|failed' $OUT/sanitizer-memcheck.log | tr '\n' ' ')"
step racecheck
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider $R/tests/test_norm_quant.py -k "cuda and bfloat16 and (test_rmsnorm_quant or test_fused_add_rmsnorm_quant or test_layernorm_quant)" >$OUT/sanitizer-racecheck.log 2>&1
echo "racecheck rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' $OUT/sanitizer-racecheck.log | tr '\n' ' ')"
step graph_probe norms
timeout 170 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,fused_add_rmsnorm,gemma_rmsnorm,gemma_fused_add_rmsnorm,layernorm,rmsnorm_quant,fused_add_rmsnorm_quant,layernorm_quant >$OUT/graph_probe-norms.txt 2>&1; echo "rc $?"
grep -v "^  " $OUT/graph_probe-norms.txt | awk '{print $1,$2,$3,$(NF-1),$NF}'
step done
