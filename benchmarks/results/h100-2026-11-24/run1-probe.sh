#!/usr/bin/env bash
# Device run 1: build, CUDA tests of the changed kernels, graph_probe of norms/gated, softmax cluster experiment.
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers XLA_PYTHON_CLIENT_PREALLOCATE=false
step() { echo "=== $* ($(date +%T))"; }
step build
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp; python3 -m hetkern >$OUT/info.txt; tail -4 $OUT/info.txt
step pytest
timeout 200 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_norm.py $R/tests/test_activation.py $R/tests/test_softmax.py $R/tests/test_opinfo.py -k "cuda or gpu" >$OUT/pytest.log 2>&1; echo "rc $?"; tail -3 $OUT/pytest.log
step softmax experiment
cat > /tmp/smx_check.py <<'PY'
import torch, hetkern
worst = 0
for rows in (1, 5, 32, 60):
    for cols in (16384, 20000, 32000):
        x = (torch.randn(rows, cols, device="cuda") * 4).to(torch.bfloat16)
        for log in (False, True):
            f = hetkern.log_softmax if log else hetkern.softmax
            y = f(x); ref = (torch.log_softmax if log else torch.softmax)(x.double(), -1)
            d = (y.double() - ref).abs() / (ref.abs() * 2**-8 + (1e-30 if not log else 2**-8))
            worst = max(worst, float(d.max()))
print("worst error in bf16 ulps (approx):", round(worst, 3))
PY
for v in "" "HETKERN_EXP_SMX_CLUSTER=2049" "HETKERN_EXP_SMX_CLUSTER=2049 HETKERN_EXP_SMX_BLOCKS=8"; do
  echo "--- variant [$v]"
  env $v python3 /tmp/smx_check.py
  env $v timeout 60 python3 $R/benchmarks/graph_probe.py --ops softmax,log_softmax --shapes 1x32000,32x32000,256x32000 2>&1 | grep -v "^  " | tee -a $OUT/softmax-exp.txt
done
step graph_probe gated
timeout 80 python3 $R/benchmarks/graph_probe.py --ops silu_and_mul,gelu_and_mul,gelu_tanh_and_mul >$OUT/graph_probe-gated.txt 2>&1; echo "rc $?"; grep -v "^  " $OUT/graph_probe-gated.txt | awk '{print $1,$2,$3,$(NF-1),$NF}'
step graph_probe norms
timeout 120 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,gemma_rmsnorm,fused_add_rmsnorm,gemma_fused_add_rmsnorm >$OUT/graph_probe-norms.txt 2>&1; echo "rc $?"; grep -v "^  " $OUT/graph_probe-norms.txt | awk '{print $1,$2,$3,$(NF-1),$NF}'
step done
