#!/usr/bin/env bash
# layernorm's row shape, three builds in one run: A = 4 packs a thread (main), B = 1, C = 2.
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
for v in A B C; do
  src=/tmp/$v; cp -r $R $src
  case $v in B) sed -i 's/constexpr RowShape kLayerNormShape{kMaxCache, kMaxCachedRowThreads};/constexpr RowShape kLayerNormShape{1, kMaxCachedRowThreads};/' $src/src/cuda/norm.cu;;
             C) sed -i 's/constexpr RowShape kLayerNormShape{kMaxCache, kMaxCachedRowThreads};/constexpr RowShape kLayerNormShape{2, kMaxCachedRowThreads};/' $src/src/cuda/norm.cu;; esac
  grep -n "constexpr RowShape kLayerNormShape" $src/src/cuda/norm.cu
  echo "=== build $v $(date +%T)"
  (cd $src && python3 -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=/tmp/build-$v -Csetup-args=-Dgpu_archs=90 . >$OUT/build-$v.log 2>&1) || { tail -30 $OUT/build-$v.log; exit 1; }
  cd /tmp
  timeout 60 python3 $R/benchmarks/graph_probe.py --ops layernorm >$OUT/graph_probe-$v.txt 2>&1; echo rc $?
done
paste <(grep -v "^  " $OUT/graph_probe-A.txt | awk '{print $1,$2,$3,$4}') <(grep -v "^  " $OUT/graph_probe-B.txt | awk '{print $3,$4}') <(grep -v "^  " $OUT/graph_probe-C.txt | awk '{print $3,$4, $(NF-2), $(NF-1), $NF}')
echo "=== done $(date +%T)"
