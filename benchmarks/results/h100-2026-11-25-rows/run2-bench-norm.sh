#!/usr/bin/env bash
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m pytest -q -p no:cacheprovider -n 8 $R/tests/test_norm.py $R/tests/test_norm_quant.py $R/tests/test_large.py $R/tests/test_strided.py -k "cuda or gpu" 2>&1 | tail -3 | tee $OUT/pytest.txt
echo "tests $(( $(date +%s)-t0 )) s"
python3 -m hetkern.bench --device cuda --family norm --samples 9 --gpu-max 64M --dtypes bfloat16 --time-cap "${CAP:-200}" --out /tmp/hb > $OUT/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s)-t0 )) s"
python3 -m hetkern.bench.report /tmp/hb/results.json > $OUT/SUMMARY.md; tar -C /tmp/hb -cf $OUT/bench.tar .
grep -E "^(rmsnorm|fused|layernorm|gemma)" $OUT/bench.txt | sed 's/  */ /g' | cut -d'|' -f1,2 | awk '{print $1, $3, $0}' | sed 's/|.*graph://' | cut -c1-120 | awk '{print $1,$2,$(NF-6),$(NF-5),$(NF-4),$(NF-3),$(NF-2),$(NF-1),$NF}'
