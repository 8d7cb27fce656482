#!/usr/bin/env bash
# stop 48 device run 4 (H200): float32 layernorm 1024x4096 with held peer
# outputs (run 3: 12.32 us against Liger's 10.29, rmsnorm level): the tree's
# graph times, then Nsight Compute of hetkern's, Liger's and torch's
# layernorm and rmsnorm kernels at that shape.
set -uo pipefail
R=$PWD
t0=$(date +%s)
REPS=1 timeout 150 tools/variants src/cuda/norm.cu \
  '--buffers 4 --dtype float32 --ops layernorm,rmsnorm --shapes 1024x4096,4096x4096' > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; cat "$OUT/variants.txt"
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH="$R/python"
cd /tmp
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__cycles_active.avg
timeout 60 ncu --clock-control none -k "regex:LayerNorm|layer_norm|RMSNorm|rms_norm" --launch-count 24 --metrics $M \
  python3 "$R/benchmarks/graph_probe.py" --ncu --ops layernorm,rmsnorm --shapes 1024x4096 --dtype float32 --buffers 4 \
  > "$OUT/ncu-norms-f32.txt" 2>&1
echo "ncu rc=$? $(( $(date +%s) - t0 )) s"
python3 "$R/ab-base/ncuparse.py" "$OUT"/ncu-*.txt > "$OUT/ncu-table.txt" 2>&1; cat "$OUT/ncu-table.txt"
