#!/usr/bin/env bash
# stop 42 device run 4: Nsight Compute of the misses that runs 1-3 left:
# float32 rope (16384 tokens) against Liger; bfloat16 layernorm_quant rows of
# 4 packs a thread (4096x16384) against split rows (16384x4096); float32
# layernorm_quant and fused_add_rmsnorm_quant 16384x16384 against torch.compile.
set -uo pipefail
R=$PWD
source .gpu-carry/setup.sh >/dev/null || { echo "carry setup failed"; exit 1; }
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
echo "build $(date +%T)"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >"$OUT/run4-build.log" 2>&1 \
  || { tail -40 "$OUT/run4-build.log"; exit 1; }
cd /tmp
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
prof() {  # name, kernel regex, probe args...
  local name=$1 k=$2; shift 2
  echo "== $name $(date +%T)"
  timeout 120 ncu --clock-control none -k "regex:$k" --launch-count 16 --metrics $M \
    python3 "$R/benchmarks/graph_probe.py" --ncu "$@" > "$OUT/run4-ncu-$name.txt" 2>&1
  echo "rc=$?"
}
prof rope-f32 '[Rr]ope' --ops rope --shapes 16384x0 --dtype float32
prof lnq-bf16 'LayerNormKernel' --ops layernorm_quant --shapes 4096x16384,16384x4096
prof quant-f32 'LayerNormKernel|RMSNormKernel|triton' --ops layernorm_quant,fused_add_rmsnorm_quant --shapes 16384x16384 --dtype float32 --compile
python3 - "$OUT"/run4-ncu-*.txt <<'PY' | tee "$OUT/run4-ncu-summary.txt"
import re, sys
for f in sys.argv[1:]:
    print("==", f.split("/")[-1])
    for line in open(f):
        if re.match(r"\s+\S.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line):
            print(line.split("(")[0].strip()[:60] + " " + re.search(r"\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line).group(0))
        m = re.match(r"\s+(\S+)\s+(\S+)\s+([\d.,]+)\s*$", line)
        if m and ("__" in m.group(1)):
            name = m.group(1).replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", "")
            print(f"    {name:60} {m.group(2):>8} {m.group(3)}")
PY
echo "done $(date +%T)"
