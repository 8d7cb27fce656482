#!/usr/bin/env bash
set -uo pipefail
R=$(pwd); source .gpu-carry/setup.sh || exit 1
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
cd /tmp; cp -r $R /tmp/B; cd /tmp/B && patch -p1 < .probe/B.patch && cd /tmp
for v in A B; do
  src=$R; [ $v = B ] && src=/tmp/B
  echo "=== build $v $(date +%T)"
  (cd $src && python3 -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=/tmp/build-$v -Csetup-args=-Dgpu_archs=90 . >$OUT/build-$v.log 2>&1) || { tail -30 $OUT/build-$v.log; exit 1; }
  echo "=== graph_probe $v $(date +%T)"
  timeout 100 python3 $R/benchmarks/graph_probe.py --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant >$OUT/graph_probe-$v.txt 2>&1; echo rc $?
  if [ $v = A ]; then
    echo "=== tests A $(date +%T)"
    timeout 100 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests/test_norm_quant.py $R/tests/test_opinfo.py -k "quant and (cuda or gpu)" >$OUT/pytest.log 2>&1; echo rc $?; tail -2 $OUT/pytest.log
  fi
done
paste <(grep -v "^  " $OUT/graph_probe-A.txt | awk '{print $1,$2,$3,$4}') <(grep -v "^  " $OUT/graph_probe-B.txt | awk '{print $3,$4,$(NF-1),$NF}')
echo "=== probe $(date +%T)"; timeout 200 $R/.probe/check-quant-division 2>&1 | tee $OUT/check-quant-division.txt
echo "=== done $(date +%T)"
