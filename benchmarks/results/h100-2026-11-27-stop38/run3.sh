set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt 2>&1
OMP_WAIT_POLICY=PASSIVE timeout 330 python3 -m pytest -q -p no:cacheprovider -n 12 $R/tests -k "cuda or gpu or cupy or jax" 2>&1 | tail -25 > $OUT/cuda-pytest.txt
tail -3 $OUT/cuda-pytest.txt; echo "tests $(( $(date +%s)-t0 )) s"
for tool in racecheck memcheck; do
  timeout 70 compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    $R/tests/test_norm_quant.py -k "row_bits_independent and layernorm_quant and (2048 or 5120)" 2>&1 | tail -3 | tee $OUT/$tool.txt
done
echo "sanitizers $(( $(date +%s)-t0 )) s"
timeout 60 python3 $R/benchmarks/graph_probe.py --ops layernorm_quant,layernorm --shapes 1x4096,16384x4096,4096x16384 --dtype bfloat16 2>&1 | tee $OUT/probe.txt
echo "done $(( $(date +%s)-t0 )) s"
