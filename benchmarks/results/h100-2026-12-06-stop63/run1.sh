#!/usr/bin/env bash
# stop 63 device run 1: F = main (4846430, built here by tools/gpu-ab
# prebuild as A). Nsight Compute of the issue-11 misses against their peers:
# float32 softmax 96x32000 (RegisterRowsKernel<float,4,1024,8> against
# Liger), bfloat16 layernorm_quant and layernorm 4096x16384 (against
# rmsnorm_quant, Liger, FlashInfer), float32 layernorm 16384x16384 (against
# Liger). C = F with float32 softmax rows of 16K-32K values on clusters of
# 4 blocks of 8 packs, two blocks an SM, up to 66 rows (F: 2 blocks of 16
# packs at 33-66 rows); D = C with the cluster kernel's float32 terms kept
# from the sum pass for the store pass (one exp a value, not two). Graph
# replay F C D F C D; D's softmax CUDA tests, accuracy, memcheck and
# racecheck (tools/sanitize-rows.py cuda softmax).
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab /tmp/ncu && xz -dc .gpu-carry/ab/A.so.xz > /tmp/ab/F.so && xz -dc .gpu-carry/ab/C.so.xz > /tmp/ab/C.so && xz -dc .gpu-carry/ab/D.so.xz > /tmp/ab/D.so
export HETKERN_LIBRARY=/tmp/ab/F.so
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv;
  cd /tmp && python3 -m hetkern; } > "$OUT/machine.txt" 2>&1
lap ready | tee "$OUT/laps.txt"
HETKERN_LIBRARY=/tmp/ab/D.so timeout 60 python3 "$R/benchmarks/softmax_accuracy.py" > "$OUT/accuracy-D.txt" 2>&1 &
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /")
}
timeout 170 bash -c "$(declare -f probe); for pass in 1 2; do
  for side in F C D; do
    probe \$side --dtype float32 --ops softmax --shapes 1x32000,16x32000,32x32000,48x32000,64x32000,66x32000,96x32000
    probe \$side --dtype float32 --ops log_softmax --shapes 48x32000,64x32000
  done
done" > "$OUT/ab.txt" 2>&1
lap probed | tee -a "$OUT/laps.txt"
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section LaunchStats --section Occupancy --section InstructionStats --section SourceCounters"
prof() {  # name, kernel regex, launch count, graph_probe arguments...
  local name=$1 regex=$2 count=$3; shift 3
  (cd /tmp && timeout 90 ncu --clock-control none $S --import-source no -k "regex:$regex" --launch-count $count \
     -o /tmp/ncu/$name -f python3 "$R/benchmarks/graph_probe.py" --ncu "$@" > /tmp/ncu/$name.log 2>&1)
  echo "ncu $name rc=$?" | tee -a "$OUT/laps.txt"
  ncu -i /tmp/ncu/$name.ncu-rep --print-summary none > /tmp/ncu/$name.txt 2>&1
  ncu -i /tmp/ncu/$name.ncu-rep --page source --print-source sass --csv > /tmp/ncu/$name-sass.csv 2>&1
}
prof softmax96 'RegisterRows|_softmax' 6 --dtype float32 --ops softmax --shapes 96x32000
prof softmax64 'ClusterRows|_softmax' 6 --dtype float32 --ops softmax --shapes 64x32000
prof lnq 'LayerNorm|RMSNorm|layer_norm|layernorm' 12 --dtype bfloat16 --ops layernorm_quant,rmsnorm_quant --shapes 4096x16384
prof ln16 'LayerNorm|layer_norm|layernorm' 9 --dtype bfloat16 --ops layernorm --shapes 4096x16384
prof ln32 'LayerNorm|layer_norm|layernorm' 9 --dtype float32 --ops layernorm --shapes 16384x16384
lap profiled | tee -a "$OUT/laps.txt"
(cd /tmp && tar -cJf "$OUT/ncu.tar.xz" ncu)
wait
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/D.so OMP_WAIT_POLICY=PASSIVE timeout 90 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_softmax.py" -k "cuda" > "$OUT/cuda-pytest-D.txt" 2>&1
 echo "D softmax tests rc=$?: $(tail -n 1 "$OUT/cuda-pytest-D.txt")") | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  left=$(( 580 - ($(date +%s) - t0) ))
  [ $left -gt 20 ] || break
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/D.so timeout $left compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda softmax > /tmp/sanitizer-$tool.log 2>&1)
  echo "D $tool rc=$?: $(tail -n 30 /tmp/sanitizer-$tool.log | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  tail -n 40 /tmp/sanitizer-$tool.log >> "$OUT/sanitizer.txt"
done
lap tested | tee -a "$OUT/laps.txt"
for n in softmax96 softmax64 lnq ln16 ln32; do
  grep -E '^  [A-Za-z_]|Duration|Registers Per|Issue Slots Busy|Achieved Occupancy|Memory Throughput|DRAM Throughput|Executed Ipc A|No Eligible|Block Size|Grid Size' /tmp/ncu/$n.txt | head -80
done
grep "softmax " "$OUT/accuracy-D.txt" | grep -v log_ | head -20
grep -E "^[FCD] (softmax|log_softmax) " "$OUT/ab.txt" | awk '{print $1, $2, $4, $5, $6, $7, $8}' | sort -k2,2 -k3,3 -s
cat "$OUT/laps.txt"
