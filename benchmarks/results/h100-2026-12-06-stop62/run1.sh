#!/usr/bin/env bash
# stop 62 device run 1. Libraries prebuilt here (tools/gpu-ab prebuild and
# variant), carried xz'd:
#   A = main;
#   C = A + Z (stop 61's Z.diff: the cluster kernel's float32 softmax terms
#       as exp2f(fma(v - s, log2 e, c)) on one-reduction clusters of up to 8
#       packs a thread) + float32 NeoX rope on 8 pairs a thread (two 16-byte
#       packs of each half) instead of 4;
#   D = C + softmax's outputs stored evict-first (st.global.cs), as Liger's.
# Graph replay, two passes: A C D of float32 softmax rows, C D of bfloat16
# ones, A C of float32 rope; C's softmax accuracy; D's softmax and rope CUDA
# tests; memcheck and racecheck of tools/sanitize-rows.py softmax rope on D.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A C D; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv;
  HETKERN_LIBRARY=/tmp/ab/D.so python3 -m hetkern; } > "$OUT/machine.txt" 2>&1
lap ready | tee "$OUT/laps.txt"
HETKERN_LIBRARY=/tmp/ab/C.so timeout 30 python3 "$R/benchmarks/softmax_accuracy.py" > "$OUT/accuracy-C.txt" 2>&1 &
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /"
}
F32=1x32000,24x32000,32x32000,48x32000,64x32000,96x32000,128x32000,256x32000,1x151936,4096x4096
B16=1x32000,32x32000,64x32000,128x32000,256x32000,1x151936
timeout 260 bash -c "$(declare -f probe); for pass in 1 2; do
  for side in A C D; do probe \$side --dtype float32 --ops softmax --shapes $F32; done
  for side in C D; do probe \$side --dtype bfloat16 --ops softmax --shapes $B16; done
  for side in A C; do probe \$side --dtype float32 --ops rope; done
  echo pass \$pass
done" > "$OUT/ab.txt" 2>&1
wait
lap probed | tee -a "$OUT/laps.txt"
HETKERN_LIBRARY=/tmp/ab/D.so OMP_WAIT_POLICY=PASSIVE timeout 120 python3 -m pytest -q -rfE -p no:cacheprovider -n 15 \
  "$R/tests/test_softmax.py" "$R/tests/test_rope.py" -k "cuda" > "$OUT/cuda-pytest.txt" 2>&1
echo "D softmax+rope tests rc=$?: $(tail -n 1 "$OUT/cuda-pytest.txt")" | tee -a "$OUT/laps.txt"
lap tested | tee -a "$OUT/laps.txt"
for tool in memcheck racecheck; do
  HETKERN_LIBRARY=/tmp/ab/D.so timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda softmax rope > /tmp/sanitizer-$tool.log 2>&1
  echo "D $tool rc=$?: $(tail -n 30 /tmp/sanitizer-$tool.log | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')" | tee -a "$OUT/laps.txt"
  tail -n 40 /tmp/sanitizer-$tool.log >> "$OUT/sanitizer.txt"
done
lap sanitized | tee -a "$OUT/laps.txt"
grep -E "^[ACD] (softmax|rope) " "$OUT/ab.txt" | awk '{print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}' | sort -k3,3 -k4,4 -s
grep "softmax " "$OUT/accuracy-C.txt" | grep -v log_ | head -20
cat "$OUT/laps.txt"
