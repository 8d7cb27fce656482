#!/usr/bin/env bash
# Device run 4: L2 prefetch issued before the row's loads, everywhere (B1) or not in the non-quant fused kernels (B2).
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
step() { echo "=== $* ($(date +%T))"; }
probe() {
  (cd /tmp && timeout 90 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,fused_add_rmsnorm,gemma_fused_add_rmsnorm,fused_add_rmsnorm_quant --shapes 16384x8192,128x8192,128x4096,1x4096 2>&1 | grep -v "^  " | sed "s/^/$1 /")
}
for v in B1 B2; do
  step build $v
  if [ $v = B2 ]; then
    python3 - <<'PY'
s=open('src/cuda/norm.cu').read()
old="""        PrefetchBlockNextRow<kCache>(a.x, a.x_stride, row, a.rows, a.hidden);
        if constexpr (kFusedAdd) {"""
new="""        if constexpr (!kFusedAdd || kQuant) PrefetchBlockNextRow<kCache>(a.x, a.x_stride, row, a.rows, a.hidden);
        if constexpr (kFusedAdd && kQuant) {"""
assert old in s; open('src/cuda/norm.cu','w').write(s.replace(old,new))
PY
  fi
  python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build-$v.log 2>&1 || { tail -30 $OUT/build-$v.log; exit 1; }
  probe $v | tee $OUT/probe-$v.txt
done
probe B2again | grep fused_add_rmsnorm
step done
