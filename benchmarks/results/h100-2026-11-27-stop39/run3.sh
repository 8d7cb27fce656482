#!/usr/bin/env bash
# stop 39 device run 3: the landed tree (pipelined rope, staged layernorm_quant, explicit activation fma):
# build, sanitizers over the new paths, probes of the landed code, every CUDA/GPU/CuPy/JAX test.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt
for tool in racecheck memcheck; do
  timeout 90 compute-sanitizer --tool $tool --print-limit 20 python3 $R/ab-base/s39_sanitize.py > $OUT/sanitize-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'SUMMARY|ok$' $OUT/sanitize-$tool.txt | tr '\n' ' ')"
done
echo "sanitized $(( $(date +%s)-t0 )) s"
python3 $R/benchmarks/graph_probe.py --ops rope --shapes 1x0,1024x0,4096x0,8192x0,16384x0 > $OUT/probe.txt 2>&1
python3 $R/benchmarks/graph_probe.py --ops layernorm_quant --shapes 1x4096,4096x16384,1024x16384,8192x12288,16384x4096 >> $OUT/probe.txt 2>&1
cat $OUT/probe.txt
echo "probed $(( $(date +%s)-t0 )) s"
OMP_WAIT_POLICY=PASSIVE timeout 340 python3 -m pytest -q -p no:cacheprovider -n 12 $R/tests -k "cuda or gpu or cupy or jax" > $OUT/cuda-pytest.txt 2>&1
echo "pytest rc=$?"; tail -4 $OUT/cuda-pytest.txt
echo "done $(( $(date +%s)-t0 )) s"
