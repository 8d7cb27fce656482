#!/usr/bin/env bash
# Run 4: per-instruction warp-stall sampling (Nsight Compute source page,
# SASS) of hetkern's and Liger's bfloat16 softmax at 1024x16384 (the same
# launch shape: 1024 blocks of 512 threads, ~62 registers, yet 28.8 against
# 25.2 us under ncu) and 4096x32000.
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 "$R" > /tmp/pip.log 2>&1 || { tail -20 /tmp/pip.log; exit 1; }
cd /tmp
for shape in 1024x16384 4096x32000; do
  timeout 200 ncu --set full --import-source no --kernel-name regex:"RegisterRows|SharedRows|_softmax_single" \
    --launch-skip 0 --launch-count 6 -o /tmp/pc-$shape -f \
    python3 "$R/benchmarks/graph_probe.py" --ncu --ops softmax --shapes $shape > /tmp/ncu-$shape.log 2>&1
  echo "ncu $shape: exit $?"; tail -3 /tmp/ncu-$shape.log
  ncu --import /tmp/pc-$shape.ncu-rep --page source --print-source sass --csv 2> /tmp/src-err-$shape.txt | gzip > "$OUT/source-$shape.csv.gz"
  echo "source page $shape: $(zcat "$OUT/source-$shape.csv.gz" | wc -l) lines"; head -5 /tmp/src-err-$shape.txt
  ncu --import /tmp/pc-$shape.ncu-rep --page details --print-details all 2>&1 | gzip > "$OUT/details-$shape.txt.gz"
done
