#!/usr/bin/env bash
# stop 41 device run 1: the CPU norms' split pairs on the 16-core host (AVX3_SPR): build, CPU norm/softmax
# tests over every target the host has (and the CUDA norm tests), base/new A/B of the CPU-only libraries
# built here (1 and 16 threads), and the bench's thread sweep of the bf16 norms.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | sed 's/Flags:.*avx512_bf16.*/Flags: ... avx512_bf16 .../' > $OUT/cpu.txt; head -2 $OUT/cpu.txt
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt; grep -E "targets|in use" $OUT/info.txt
OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -p no:cacheprovider -n 14 $R/tests/test_norm.py $R/tests/test_softmax.py > $OUT/pytest.txt 2>&1
echo "pytest rc=$?"; tail -2 $OUT/pytest.txt
echo "tests done $(( $(date +%s)-t0 )) s"
for rep in 1 2; do for name in base new; do for threads in 1 16; do
  HETKERN_LIBRARY=$R/ab-base/libs/$name.so PYTHONPATH=$R/python timeout 60 python3 $R/benchmarks/graph_probe.py --device cpu --threads $threads --dtype bfloat16 \
    --ops rmsnorm,fused_add_rmsnorm,layernorm,gemma_rmsnorm --shapes 8x4096,128x4096,1024x4096,256x16384 2>&1 | grep -v Warn | sed "s/^/$name /"
done; done; done > $OUT/ab.txt
echo "ab done $(( $(date +%s)-t0 )) s"; grep -c hetkern= $OUT/ab.txt
OMP_WAIT_POLICY=PASSIVE timeout $(( 570 - ($(date +%s)-t0) )) python3 -m hetkern.bench --device cpu --ops rmsnorm,fused_add_rmsnorm,layernorm --dtypes bfloat16 \
  --cpu-max 16777216 --thread-sweep --samples 9 --out $OUT/bench > $OUT/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s)-t0 )) s"; grep -A30 -i "scaling" $OUT/bench.txt | head -40
