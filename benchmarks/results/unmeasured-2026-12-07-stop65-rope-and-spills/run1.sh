#!/usr/bin/env bash
# Device run 1, prepared at stop 65 and not run there (no device machine
# could be started: 16 calls). In order of need, since device time may
# cut the call (what is in $OUT comes back): graph replay of the quant
# norms' large shapes, A against C; rope float32 A against D; D's norm,
# quant-norm and rope CUDA tests; memcheck and racecheck over the norm and
# rope row kernels on D; then A B C at decode shapes and float32, softmax
# 4096 x 128256 / 151936 on C (issue 11's >= 2.6 TB/s), and the large
# shapes (B too) and rope again.
# Libraries (prepare.sh builds them here into .gpu-carry/ab, xz'd): A =
# main, B and C = stop 64's B.diff and C.diff (benchmarks/results/
# unmeasured-2026-12-07-stop64-quant-norms/), D = C + float32 NeoX rope on
# 8 pairs a thread (D.diff). E (E.diff: D + layernorm's parameters
# prefetched into L1) is not run: ptxas spilled more in nine layernorm
# kernels with it (float32 split layernorm 0 -> 32 bytes; its fp8 form 0
# -> 64), sass/registers-and-spills.txt.
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
# C spills 16 bytes where main spills none in the 2-pack bf16 layernorm_quant
# kernel (x 257-512, odd warp counts such as x 3584): time those rows too.
for side in A C; do probe $side --buffers 4 --ops layernorm_quant --shapes 16384x512,16384x3584,16384x1536; done >> "$OUT/ab-spill-shapes.txt" 2>&1
lap "spill shapes"
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
for side in A B C; do
  probe $side --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 1x4096,128x4096
  probe $side --buffers 4 --dtype float32 --ops layernorm_quant,fused_add_rmsnorm_quant --shapes 16384x4096,4096x16384
done >> "$OUT/ab.txt" 2>&1
lap "decode and float32"
for dt in bfloat16 float32; do probe C --dtype $dt --ops softmax,log_softmax --shapes 4096x128256,4096x151936; done > "$OUT/softmax-4096.txt" 2>&1
lap softmax
large >> "$OUT/ab.txt" 2>&1
rope >> "$OUT/rope.txt" 2>&1
lap "large shapes and rope again"
