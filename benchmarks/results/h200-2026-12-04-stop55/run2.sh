#!/usr/bin/env bash
# stop 55 device run 2: run 1 found the table kernel (resident grid, 2 packs
# a thread) 15 % faster at 8M-16M values and 6 % at 256M, but level with
# the formula at 64M. tools/variants over src/cuda/activation.cu: the tree
# (resident grid of 2 x 1024 threads an SM, 2 packs a thread) against
# chunk2 (a block a chunk of 2 packs a thread, as many blocks as the call
# needs), chunk4 (the same, 512 threads, 3 blocks an SM, 4 packs), persist4
# (resident grid of 1 x 1024 threads an SM at 64 registers, 4 packs) and
# old (1a277b7: the formula in MapUnary's kernel). Then Nsight Compute of
# the tree's and old's kernels at 64M values.
set -uo pipefail
R=$PWD
t0=$(date +%s)
TESTS='gelu_table or (call_size and gelu)' REPS=2 timeout 400 tools/variants src/cuda/activation.cu \
  '--ops gelu --shapes 1x4194304,1x8388608,1x16777216,1x67108864,1x268435456 --buffers 4' > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/variants-log.txt"
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
cd /tmp
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio
for lib in tree old; do
  HETKERN_LIBRARY=/tmp/variants/build-$lib/src/libhetkern.so PYTHONPATH="$R/python" timeout 60 \
    ncu --clock-control none -k "regex:Gelu|MapUnary" --launch-count 3 --metrics $M \
    python3 "$R/benchmarks/graph_probe.py" --ncu --ops gelu --shapes 1x67108864 > "$OUT/ncu-$lib.txt" 2>&1
  echo "ncu $lib rc=$? $(( $(date +%s) - t0 )) s"
done
