#!/usr/bin/env bash
# stop 65 device run 1, short form (run1.sh reordered: after ten failed
# starts only ~300 s of device time could be left). Probes first, tests
# and sanitizers with what remains.
# Libraries (built here by stop 64's prepare.sh and
# `tools/gpu-ab variant D|E`, carried xz'd in .gpu-carry/ab): A = main, B
# and C = stop 64's B.diff and C.diff (benchmarks/results/
# unmeasured-2026-12-07-stop64-quant-norms/), D = C + float32 NeoX rope on
# 8 pairs a thread (D.diff), E = D + layernorm's parameters asked into L1
# before the reductions where blocks share an SM (E.diff). E is not run:
# its prefetch loop made ptxas spill (float32 split layernorm 32 bytes of
# stack, a bfloat16 layernorm_quant kernel 24; C's spill none), so D is
# carried in its place.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab}.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s" | tee -a "$OUT/laps.txt"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab
for s in A B C D; do xz -dc .gpu-carry/ab/$s.so.xz > /tmp/ab/$s.so; done
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/machine.txt" 2>&1
lap ready
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /")
}
large() { for side in A B C; do probe $side --buffers 4 --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 16384x4096,4096x16384,16384x16384; done; }
rope() { for side in A D; do probe $side --buffers 4 --dtype float32 --ops rope --shapes 1x0,128x0,4096x0,16384x0; done; }
large2() { for side in A C; do probe $side --buffers 4 --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 16384x4096,4096x16384,16384x16384; done; }
large2 >> "$OUT/ab.txt" 2>&1
lap "large shapes"
rope >> "$OUT/rope.txt" 2>&1
lap rope
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/D.so OMP_WAIT_POLICY=PASSIVE timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" "$R/tests/test_rope.py" -k cuda > "$OUT/cuda-pytest-D.txt" 2>&1
 echo "D norm, quant-norm and rope tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-D.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/D.so timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda norm rope > /tmp/sanitizer-$tool.log 2>&1)
  echo "D $tool rc=$?: $(tail -n 30 /tmp/sanitizer-$tool.log | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  tail -n 40 /tmp/sanitizer-$tool.log >> "$OUT/sanitizer.txt"
done
lap sanitized
