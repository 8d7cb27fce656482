#!/usr/bin/env bash
# stop 60 device run 1. No build on the device: A = main (896e160), B = main +
# next-F (float32 2-block softmax rows on 256 threads x 16 packs), C = main +
# next-G (16-bit rows take no 2-block cluster) + rope's cos/sin loaded a token
# ahead, D = main + S (the cluster softmax kernel's two reductions, max then
# sum, as one of (max, sum) pairs: one cluster barrier a row, not two), built
# here (tools/gpu-ab prebuild, variant) and carried xz'd in .gpu-carry/ab/.
# F reaches float32 softmax rows of 2-block clusters, G 16-bit ones, the rope
# change rope, S every cluster row; each library is probed only where it
# differs from A.
# Then:
# memcheck and racecheck of tools/sanitize-rows.py softmax on A (main's
# 16-block pack choice has not run on a GPU yet) and D, memcheck of its rope
# calls on C; the CUDA tests of test_softmax.py on D and of test_rope.py on C.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A B C D; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/machine.txt"
HETKERN_LIBRARY=/tmp/ab/A.so python3 -m hetkern > "$OUT/info.txt" 2>&1
lap ready
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /"
}
SM='softmax:32x32000,softmax:48x32000,softmax:64x32000,log_softmax:32x32000,log_softmax:48x32000,log_softmax:64x32000'
RP='rope:1x0,rope:4096x0,rope:16384x0'
WIDE='softmax:1x32000,softmax:1x128256,softmax:1x151936,softmax:32x151936,log_softmax:1x32000,log_softmax:1x128256,log_softmax:1x151936,log_softmax:32x151936'
timeout 280 bash -c "$(declare -f probe); for pass in 1 2; do
  probe A --dtype float32 --ops softmax,log_softmax,rope --shapes $SM,$WIDE,$RP
  probe A --dtype bfloat16 --ops softmax,log_softmax,rope --shapes $SM,$WIDE,$RP
  probe B --dtype float32 --ops softmax,log_softmax --shapes $SM
  probe C --dtype float32 --ops rope --shapes $RP
  probe C --dtype bfloat16 --ops softmax,log_softmax,rope --shapes $SM,$RP
  probe D --dtype float32 --ops softmax,log_softmax --shapes $SM,$WIDE
  probe D --dtype bfloat16 --ops softmax,log_softmax --shapes $SM,$WIDE
  echo pass \$pass
done" > "$OUT/ab.txt" 2>&1
lap probed
sanitize() {  # library, tool, family
  HETKERN_LIBRARY=/tmp/ab/$1.so timeout 90 compute-sanitizer --tool $2 --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda $3 > "$OUT/sanitizer-$1-$2-$3.log" 2>&1
  echo "$1 $2 $3 rc=$?: $(tail -n 30 "$OUT/sanitizer-$1-$2-$3.log" | grep -E 'calls checked|SUMMARY' | tr '\n' ' ')"
}
sanitize A memcheck softmax
sanitize A racecheck softmax
sanitize D memcheck softmax
sanitize D racecheck softmax
sanitize C memcheck rope
lap sanitized
HETKERN_LIBRARY=/tmp/ab/D.so timeout 100 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests/test_softmax.py" \
  -k "cuda or gpu" 2>&1 | tail -3 | sed 's/^/D softmax tests: /'
HETKERN_LIBRARY=/tmp/ab/C.so timeout 100 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests/test_rope.py" \
  -k "cuda or gpu" 2>&1 | tail -3 | sed 's/^/C rope tests: /'
lap tested
grep -E "^[ABCD] (softmax|log_softmax|rope) " "$OUT/ab.txt" | sort -k2,2 -k3,3 -k4,4 -s
