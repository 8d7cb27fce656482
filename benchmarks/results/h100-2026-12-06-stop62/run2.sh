#!/usr/bin/env bash
# stop 62 device run 2: F = what lands (A = main + run 1's Z, and softmax's
# outputs stored evict-first in the shared-row kernel only). Every
# CUDA/GPU/CuPy/JAX test of tests/ on F; graph replay A F A F of the rows
# F changes; then the softmax rows of the peers tables, bfloat16 and float32,
# as far as the call's time goes.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A F; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv;
  cd /tmp && HETKERN_LIBRARY=/tmp/ab/F.so python3 -m hetkern; } > "$OUT/machine.txt" 2>&1
lap ready | tee "$OUT/laps.txt"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/F.so OMP_WAIT_POLICY=PASSIVE timeout 280 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests" -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest.txt" 2>&1
 echo "F tests rc=$?: $(tail -n 1 "$OUT/cuda-pytest.txt")") | tee -a "$OUT/laps.txt"
lap tested | tee -a "$OUT/laps.txt"
probe() {  # library, graph_probe arguments...
  local side=$1; shift
  (cd /tmp && HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /")
}
timeout 120 bash -c "$(declare -f probe); for pass in 1 2; do
  for side in A F; do
    probe \$side --dtype float32 --ops softmax --shapes 32x32000,128x32000,256x32000,1x151936
    probe \$side --dtype bfloat16 --ops softmax,log_softmax --shapes 32x32000,256x32000
  done
done" > "$OUT/ab.txt" 2>&1
lap probed | tee -a "$OUT/laps.txt"
for dtype in bfloat16 float32; do
  left=$(( ${TOTAL:-470} - ($(date +%s) - t0) ))
  [ $left -gt 60 ] || break
  (cd "$R" && OUT=/tmp/peers-$dtype SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/F.so PEER_DTYPE=$dtype \
     PEER_FAMILIES=softmax PEER_CAPS=25,softmax=105 timeout $left tools/gpu-check peers > /tmp/peers-$dtype.log 2>&1)
  lap "peers $dtype" | tee -a "$OUT/laps.txt"
  cp /tmp/peers-$dtype/*-SUMMARY.md "$OUT/" 2>/dev/null
  for t in /tmp/peers-$dtype/*-peers.tar; do [ -f "$t" ] && xz -T0 -c "$t" > "$OUT/$(basename "$t").xz"; done
done
grep -E "^[AF] (softmax|log_softmax) " "$OUT/ab.txt" | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}' | sort -k2,2 -k3,3 -k4,4 -s
grep -hE "^\| (softmax|log_softmax) " "$OUT"/*-peers-SUMMARY.md 2>/dev/null | cut -c1-150
cat "$OUT/laps.txt"
