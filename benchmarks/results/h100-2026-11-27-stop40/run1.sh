#!/usr/bin/env bash
# stop 40 device run 1: rope against Liger, why the two harnesses disagree (values, order, L2), ncu of both kernels.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt
timeout 150 python3 $R/ab-base/s40_rope_probe.py 1024,4096,8192,16384 2>&1 | tee $OUT/rope-probe.txt
echo "probe $(( $(date +%s)-t0 )) s"
timeout 100 python3 -m hetkern.bench --device cuda --family rope --dtypes bfloat16 --samples 9 --out /tmp/pr > $OUT/rope-peers.txt 2>&1
grep -E "^\| cuda|rope" $OUT/rope-peers.txt | head -20
python3 -m hetkern.bench.report /tmp/pr/results.json > $OUT/rope-peers-SUMMARY.md 2>&1; grep -E "^\| rope" $OUT/rope-peers-SUMMARY.md
echo "peers $(( $(date +%s)-t0 )) s"
for cc in none all; do
timeout 120 ncu --clock-control none --cache-control $cc -k 'regex:[Rr]ope' \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread \
  python3 $R/ab-base/s40_ncu_rope.py 4096,16384 > $OUT/ncu-$cc.txt 2>&1
echo "ncu $cc rc=$?"
done
python3 - $OUT/ncu-none.txt $OUT/ncu-all.txt <<'PY'
import re, sys
for f in sys.argv[1:]:
    print("==", f)
    name = None
    for line in open(f):
        if re.match(r"\s+\S.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line):
            name = line.split("(")[0].strip()[:40]; print(name)
        m = re.match(r"\s+(gpu__time|dram__bytes|lts__t_sector_hit|dram__throughput|sm__warps|launch__)(\S*)\s+(\S+)\s+([\d.,]+)", line)
        if m: print("   ", m.group(1) + m.group(2), m.group(3), m.group(4))
PY
echo "done $(( $(date +%s)-t0 )) s"
