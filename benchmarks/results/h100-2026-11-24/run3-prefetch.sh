#!/usr/bin/env bash
# Device run 3: norms prefetching the block's next row into L2 (B) against none (A).
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
step() { echo "=== $* ($(date +%T))"; }
probe() {
  (cd /tmp && timeout 90 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,gemma_rmsnorm,fused_add_rmsnorm,gemma_fused_add_rmsnorm,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 16384x8192,128x8192 2>&1 | grep -v "^  " | sed "s/^/$1 /"
   timeout 60 python3 $R/benchmarks/graph_probe.py --ops layernorm,layernorm_quant --shapes 4096x4096,16384x4096,128x4096 2>&1 | grep -v "^  " | sed "s/^/$1 /")
}
for v in B A; do
  step build $v
  if [ $v = A ]; then
    sed -i 's|  asm volatile("cp.async.bulk.prefetch.L2.global|  if (false) asm volatile("cp.async.bulk.prefetch.L2.global|' src/cuda/common.cuh
    grep -c "if (false) asm" src/cuda/common.cuh
  fi
  python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build-$v.log 2>&1 || { tail -30 $OUT/build-$v.log; exit 1; }
  probe $v | tee $OUT/probe-$v.txt
  if [ $v = B ]; then
    (cd /tmp && timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_norm.py $R/tests/test_norm_quant.py -k "cuda or gpu" 2>&1 | tail -2)
  fi
done
probe "B-again?no A2" | head -3
step done
