#!/usr/bin/env bash
# Device run 1 of stop 25: build, then the one-run table of hetkern against every
# GPU peer (Liger, FlashInfer, torch eager and torch.compile), bfloat16, the
# families that have peers. Usage on the device: bash <this> (carry .gpu-carry).
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
python3 -m hetkern.bench --device cuda --samples 9 --dtypes bfloat16 --family activation,norm,softmax,rope \
  --time-cap "${CAPS:-25,activation=135,norm=160,softmax=100,rope=35}" --out /tmp/hb > $OUT/bf16-peers-bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s)-t0 )) s"
python3 -m hetkern.bench.report /tmp/hb/results.json > $OUT/bf16-peers-SUMMARY.md; tar -C /tmp/hb -cf $OUT/bf16-peers.tar .
grep -i "note" $OUT/bf16-peers-bench.txt | head -30
