# The landed tree on the H100, run 1: build, every CUDA-touching test
# (CUDA, GPU, CuPy, JAX cases; the CPU-only ones run in CI), then device
# times of the ops changed this session against Liger and FlashInfer.
R=$PWD
source .gpu-carry/setup.sh
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
python3 -m hetkern > $OUT/info.txt
OMP_WAIT_POLICY=PASSIVE timeout 380 python3 -m pytest -q -ra -n 12 -p no:cacheprovider $R/tests -k "cuda or gpu or cupy or jax" > $OUT/pytest.log 2>&1
echo "pytest rc=$? after $(( $(date +%s)-t0 )) s"; tail -3 $OUT/pytest.log
timeout 100 python3 $R/benchmarks/graph_probe.py --ops softmax,log_softmax,layernorm,exp,silu > $OUT/probe.txt 2>&1; cat $OUT/probe.txt
