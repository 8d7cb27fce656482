#!/usr/bin/env bash
# Run 2, after `tools/gpu-ab run ...` installed the tree (B): Nsight Compute
# on the softmax kernels of hetkern, Liger and torch at the shapes where
# hetkern trails Liger (bfloat16 1024x16384, 4096x32000).
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
cd /tmp
probe=(python3 "$R/benchmarks/graph_probe.py" --ncu --ops softmax --shapes 1024x16384,4096x32000)
timeout 150 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats --section MemoryWorkloadAnalysis --print-details all \
  --kernel-name regex:"Rows|softmax|Softmax" --launch-count 18 "${probe[@]}" > "$OUT/ncu-sections.txt" 2>&1
echo "ncu sections: exit $?"
stalls=long_scoreboard,barrier,short_scoreboard,mio_throttle,lg_throttle,wait,math_pipe_throttle,not_selected,selected,drain,dispatch_stall,no_instruction
metrics=sm__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
for s in ${stalls//,/ }; do metrics+=",smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
timeout 120 ncu --metrics "$metrics" --kernel-name regex:"Rows|softmax|Softmax" --launch-count 18 "${probe[@]}" \
  > "$OUT/ncu-stalls.txt" 2>&1
echo "ncu stalls: exit $?"
