# Run 1: softmax, elementwise and reduce kernels as programmatic dependent
# launches; the in-place probe. Tests of every CUDA family but the norms
# (unchanged), then device times.
R=$PWD
source .gpu-carry/setup.sh
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
python3 -m hetkern > $OUT/info.txt
timeout 220 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests -k "(cuda or gpu or cupy or jax) and not norm" > $OUT/pytest.txt 2>&1; tail -3 $OUT/pytest.txt
timeout 100 python3 $R/benchmarks/results/h100-2026-11-25-pdl/inplace_probe.py > $OUT/inplace.txt 2>&1; cat $OUT/inplace.txt
timeout 140 python3 $R/benchmarks/graph_probe.py --ops softmax,log_softmax,exp,gelu,silu,gelu_tanh,scale,add > $OUT/probe.txt 2>&1; cat $OUT/probe.txt
