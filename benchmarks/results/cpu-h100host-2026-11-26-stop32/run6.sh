#!/usr/bin/env bash
# Device run 6 of stop 32: the final tree installed with CUDA (sm_90), graph_probe's
# CUDA and CPU paths, and the tests of the changed files (CUDA and every CPU target).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt
python3 $R/benchmarks/graph_probe.py --ops rmsnorm,softmax --shapes 1x4096,128x4096,4096x32000 2>&1 | tee $OUT/probe.txt
python3 $R/benchmarks/graph_probe.py --device cpu --ops rmsnorm,silu_and_mul --shapes 1x4096,1x8192 --threads 1,16 --numpy 2>&1 | tee -a $OUT/probe.txt
OMP_WAIT_POLICY=PASSIVE timeout 360 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_softmax.py $R/tests/test_norm.py \
  $R/tests/test_norm_quant.py $R/tests/test_strided.py $R/tests/test_bench.py 2>&1 | tail -4 | tee $OUT/pytest.txt
echo "done $(( $(date +%s) - t0 )) s"
