#!/usr/bin/env bash
# A = main, B = fused_add_rmsnorm_quant on one pack a thread up to 1024 threads.
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
cp -r $R /tmp/A; (cd /tmp/A && patch -R -p1 < .probe/B.patch) || exit 1
OPS=fused_add_rmsnorm_quant,fused_add_rmsnorm,rmsnorm,rmsnorm_quant,gemma_fused_add_rmsnorm
for v in A B; do
  src=$R; [ $v = A ] && src=/tmp/A
  echo "=== build $v $(date +%T)"
  (cd $src && python3 -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=/tmp/build-$v -Csetup-args=-Dgpu_archs=90 . >$OUT/build-$v.log 2>&1) || { tail -30 $OUT/build-$v.log; exit 1; }
  cd /tmp
  timeout 100 python3 $R/benchmarks/graph_probe.py --ops $OPS >$OUT/graph_probe-$v.txt 2>&1; echo rc $?
done
echo "=== tests B $(date +%T)"
timeout 120 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_norm_quant.py $R/tests/test_norm.py $R/tests/test_opinfo.py -k "norm and (cuda or gpu)" >$OUT/pytest.log 2>&1; echo rc $?; tail -2 $OUT/pytest.log
paste <(grep -v "^  " $OUT/graph_probe-A.txt | awk '{print $1,$2,$3,$4}') <(grep -v "^  " $OUT/graph_probe-B.txt | awk '{print $3,$4, $(NF-1), $NF}')
echo "=== done $(date +%T)"
