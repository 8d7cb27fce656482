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
python3 -m hetkern > $OUT/info.txt
python3 -m hetkern.bench --device cuda --samples 9 --gpu-max 64M --dtypes bfloat16,float32 \
  --time-cap "${CAPS:-25,activation=95,norm=150,softmax=50,rope=30}" --out /tmp/hb > $OUT/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s)-t0 )) s"
python3 -m hetkern.bench.report /tmp/hb/results.json > $OUT/SUMMARY.md; cp $OUT/SUMMARY.md /tmp/hb/; tar -C /tmp/hb -cf $OUT/bench.tar .
grep -i "note" $OUT/bench.txt | head -30
