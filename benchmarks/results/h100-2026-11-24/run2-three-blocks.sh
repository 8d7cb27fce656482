#!/usr/bin/env bash
# Device run 2: rmsnorm cache-2 rows at 3 blocks per SM (B) against 2 (A), one build each.
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
step() { echo "=== $* ($(date +%T))"; }
SH=1x8192,8x8192,32x8192,128x8192,16384x8192
for v in B A; do
  step build $v
  if [ $v = B ]; then
    cp src/cuda/norm.cu /tmp/norm.cu.orig; python3 - <<'PY'
s=open('src/cuda/norm.cu').read()
old="  return (kCache == 1 || kCache == 2) && std::is_same_v<T, W> && kFits ? 2 : 1;"
new="  if (kCache == 2 && std::is_same_v<T, W> && std::is_same_v<T, O> && kQuantFits) return 3;\n" + old
assert old in s; open('src/cuda/norm.cu','w').write(s.replace(old,new))
PY
  else
    cp /tmp/norm.cu.orig src/cuda/norm.cu
  fi
  python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >$OUT/build-$v.log 2>&1 || { tail -30 $OUT/build-$v.log; exit 1; }
  (cd /tmp && timeout 60 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,gemma_rmsnorm --shapes $SH 2>&1 | grep -v "^  " | tee $OUT/probe-$v.txt)
  if [ $v = B ]; then
    (cd /tmp && timeout 100 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_norm.py -k "cuda and (rmsnorm or gemma) and not quant" 2>&1 | tail -2)
  fi
done
(cd /tmp && timeout 60 python3 $R/benchmarks/graph_probe.py --ops rmsnorm,gemma_rmsnorm --shapes 16384x8192 2>&1 | grep -v "^  " | sed 's/^/A again: /')
step done
