#!/usr/bin/env bash
# stop 54 device run 3 (fresh machine): why float32 log_softmax 1x151936 takes
# ~1.9 us more than softmax of the same row (8.22 against 6.33 in run 2), and
# where softmax 64x32000 loses to Liger. tools/variants: the tree against
# ab-base/variants/logf.cu (log_softmax's log(sum) taken in float, not
# double: a timing probe, not a candidate); then Nsight Compute of the
# tree's kernels and Liger's on those rows.
set -uo pipefail
R=$PWD
t0=$(date +%s)
REPS=2 timeout 330 tools/variants src/cuda/softmax.cu \
  '--dtype float32 --ops softmax,log_softmax --shapes 1x151936,1x128256,64x32000,4x151936' > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/variants-log.txt"
source .gpu-carry/setup.sh >/dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH="$R/python"
cd /tmp
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_misc_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__cycles_active.avg
prof() {  # name, kernel regex, launches, probe args...
  local name=$1 k=$2 n=$3; shift 3
  timeout 80 ncu --clock-control none -k "regex:$k" --launch-count $n --metrics $M \
    python3 "$R/benchmarks/graph_probe.py" --ncu "$@" > "$OUT/ncu-$name.txt" 2>&1
  echo "ncu $name rc=$? $(( $(date +%s) - t0 )) s"
}
prof log-f32-151936 'Softmax|SoftMax|Rows|softmax' 9 --ops log_softmax --shapes 1x151936 --dtype float32
prof soft-f32-151936 'Softmax|SoftMax|Rows|softmax' 9 --ops softmax --shapes 1x151936 --dtype float32
prof soft-f32-64x32000 'Softmax|SoftMax|Rows|softmax' 9 --ops softmax --shapes 64x32000 --dtype float32
python3 "$R/benchmarks/results/h100-2026-11-28-stop42/ncuparse.py" "$OUT"/ncu-*.txt > "$OUT/ncu-table.txt" 2>&1
cat "$OUT/ncu-table.txt"
