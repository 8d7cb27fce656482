#!/usr/bin/env bash
# stop 45 device run 2 (H200): A/B of src/cuda/activation.cu. tree = 16-bit
# tanh on the fast ex2/rcp (Tanh16Bit); head = HEAD's activation.cuh
# (libdevice tanhf). The CUDA activation tests on the tree's library;
# tools/check-activations.cu (every 16-bit input, speed against a copy);
# then Nsight Compute of two peers-table misses: float32 softmax 64x32000
# against Liger, bfloat16 layernorm 16384x16384 against torch.compile.
set -uo pipefail
R=$PWD
t0=$(date +%s)
REPS=2 TESTS='cuda and (tanh or activation)' timeout 330 tools/variants src/cuda/activation.cu \
  '--buffers 4 --ops tanh,gelu_tanh --shapes 1x1048576,1x16777216,1x67108864' \
  '--buffers 4 --dtype float16 --ops tanh --shapes 1x67108864' > "$OUT/variants-log.txt" 2>&1
echo "variants rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/variants-log.txt"
source .gpu-carry/setup.sh >/dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
tvm_inc=$(python3 -c "import tvm_ffi.libinfo as l; print(l.find_include_path())")
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=native -I"$R" -I/tmp/variants/build-tree/include -I"$R/include" \
  -I"$tvm_inc" "$R/tools/check-activations.cu" -o /tmp/check-activations &&
  timeout 90 /tmp/check-activations > "$OUT/check-activations.txt" 2>&1
echo "check-activations rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tanh|status" "$OUT/check-activations.txt"
export HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH="$R/python"
cd /tmp
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__cycles_active.avg
prof() {  # name, kernel regex, launches, probe args...
  local name=$1 k=$2 n=$3; shift 3
  timeout 100 ncu --clock-control none -k "regex:$k" --launch-count $n --metrics $M \
    python3 "$R/benchmarks/graph_probe.py" --ncu "$@" > "$OUT/ncu-$name.txt" 2>&1
  echo "ncu $name rc=$? $(( $(date +%s) - t0 )) s"
}
prof softmax-f32 'Softmax|SoftMax|Rows|softmax' 9 --ops softmax --shapes 64x32000 --dtype float32
prof layernorm-bf16 'LayerNorm|layer_norm' 15 --ops layernorm --shapes 16384x16384 --buffers 2 --compile
python3 "$R/ab-base/ncuparse.py" "$OUT"/ncu-*.txt > "$OUT/ncu-table.txt" 2>&1; cat "$OUT/ncu-table.txt"
