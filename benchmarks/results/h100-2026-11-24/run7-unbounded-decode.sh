#!/usr/bin/env bash
# Device run 7: decode shapes with every norm kernel unbounded (1 block an SM, up to 128 registers: B)
# against the current bounds (A).
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
step() { echo "=== $* ($(date +%T))"; }
SH=1x2048,8x2048,32x2048,128x2048,1x4096,8x4096,32x4096,128x4096,1x8192,8x8192,32x8192,128x8192
cp src/cuda/norm.cu /tmp/norm.cu.orig
for v in B A; do
  step build $v
  if [ $v = B ]; then
    python3 - <<'PY'
s=open('src/cuda/norm.cu').read()
old="  return (kCache == 1 || kCache == 2) && std::is_same_v<T, W> && kFits ? 2 : 1;"
assert old in s; open('src/cuda/norm.cu','w').write(s.replace(old, "  return 1;"))
PY
  else
    cp /tmp/norm.cu.orig src/cuda/norm.cu
  fi
  python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build-$v.log 2>&1 || { tail -30 $OUT/build-$v.log; exit 1; }
  (cd /tmp && timeout 120 python3 $R/benchmarks/graph_probe.py --ops fused_add_rmsnorm,gemma_fused_add_rmsnorm,layernorm,rmsnorm_quant,rmsnorm --shapes $SH 2>&1 | grep -v "^  " | sed "s/^/$v /" | tee $OUT/probe-$v.txt)
done
step done
