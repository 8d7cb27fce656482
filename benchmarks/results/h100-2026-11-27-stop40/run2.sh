#!/usr/bin/env bash
# stop 40 device run 2: graph times against the order of contenders, eager/host times, and 4 buffer sets in turn.
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
nvidia-smi dmon -s pc -d 1 > $OUT/dmon.txt 2>&1 &
dmon=$!
timeout 400 python3 $R/ab-base/s40_order.py $R/benchmarks "rope:4096x0,rope:16384x0,fused_add_rmsnorm:2048x1024,fused_add_rmsnorm:256x16384,fused_add_rmsnorm_quant:4096x4096,rmsnorm:4096x8192" 2>&1 | grep -v Warning | tee $OUT/order.txt
kill $dmon
echo "done $(( $(date +%s)-t0 )) s"
