#!/usr/bin/env bash
# stop 58 device run 2 (run 1 on the warm H100 again; run 1's probes had no $R).
# (It ran sanitize_rows.py from this folder, now tools/sanitize-rows.py: the
# same code but for its docstring and a tighter fp8 check.) No build on the device: A (main at 768b492) and B
# (main + stop 57's kernels.diff: 3 blocks an SM at 4 packs, IsRowMax,
# 16-bit log_softmax rows held to 40 registers) were built here with
# meson (-Dgpu_archs=90, release) and carried xz'd in .gpu-carry/ab/; they
# are loaded through HETKERN_LIBRARY with this tree's python/. Then:
# graph-replay A B A B (benchmarks/graph_probe.py, 4 input sets) of the rows
# stop 56 quoted; every CUDA test (-k cuda) on B; Nsight Compute (full set)
# of A's fp8 norm kernels at bfloat16 4096x16384, the H200 misses.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A B; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/machine.txt"
HETKERN_LIBRARY=/tmp/ab/B.so python3 -m hetkern > "$OUT/info.txt" 2>&1
lap ready
probe() {  # A|B, graph_probe arguments...
  local side=$1; shift
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /"
}
timeout 180 bash -c "$(declare -f probe); for side in A B A B; do
  probe \$side --dtype bfloat16 --ops log_softmax --shapes 16384x1024,16384x4096,16384x16384,4096x32000 --buffers 4
  probe \$side --dtype bfloat16 --ops rmsnorm,rmsnorm_quant,layernorm,layernorm_quant --shapes 4096x16384,16384x16384 --buffers 4
  probe \$side --dtype float32 --ops rmsnorm_quant,layernorm_quant,layernorm --shapes 4096x8192,16384x8192 --buffers 4
  probe \$side --dtype float32 --ops log_softmax,softmax --shapes 1x151936,64x32000
  echo pass \$side
done" > "$OUT/ab.txt" 2>&1
lap probed
for tool in memcheck racecheck; do
  HETKERN_LIBRARY=/tmp/ab/B.so timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" > "$OUT/sanitizer-$tool.log" 2>&1
  lap "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|calls checked' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
