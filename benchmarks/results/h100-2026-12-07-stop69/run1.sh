#!/usr/bin/env bash
# Stop 69, device call 1 (after this stop's first call, run0, ran the CUDA suite
# on N to its end and cut racecheck over all 243 norm calls off at 170 s; then
# seven calls found no machine, leaving less than one full call):
# 1. racecheck over the layernorm and layernorm_quant calls of
#    tools/sanitize-rows.py on N (main's library, .gpu-carry/ab/N.so.xz; stop
#    68's L changed layernorm_quant's grid);
# 2. the float32 peers table on N, every family if the call has the time left
#    (CALL_SECONDS, default 585), else the norm family alone;
# 3. with what is left, graph replay N against O (stop 68's unmeasured
#    512-thread softmax rows two an SM, .gpu-carry/ab/O.so.xz).
# Carry: .gpu-carry/{setup.sh,whl,peers,ab,packagecache}.
set -uo pipefail
export PROBE_TIMEOUT=60 SANITIZE_TIMEOUT=120
call=${CALL_SECONDS:-585}
source tools/device-ab-env.sh N O
sanitize N racecheck layernorm,layernorm_quant
lap "racecheck"
left=$(( call - ($(date +%s) - ab_t0) - 25 ))
if (( left >= 390 )); then families=activation,norm,softmax,rope; caps=25,activation=170,norm=290,softmax=150,rope=40
else families=norm; caps="25,norm=$(( left - 45 ))"; fi
echo "f32 peers: $families within $left s" | tee -a "$OUT/laps.txt"
SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/N.so PEER_DTYPE=float32 PEER_FAMILIES=$families PEER_CAPS=$caps \
  OUT=/tmp/pf timeout "$left" tools/gpu-check peers > /tmp/pf.log 2>&1
echo "f32 peers rc=$?" | tee -a "$OUT/laps.txt"
lap "f32 peers"
cp /tmp/pf/f32-peers-SUMMARY.md /tmp/pf/f32-peers-bench.txt "$OUT/"
xz -T0 -c /tmp/pf/f32-peers.tar > "$OUT/f32-peers.tar.xz"
echo "misses: $(grep -c '✘' "$OUT/f32-peers-SUMMARY.md")" | tee -a "$OUT/laps.txt"
if (( $(date +%s) - ab_t0 < call - 90 )); then
  for side in N O; do
    probe $side --buffers 2 --dtype float32 --ops softmax --shapes 4096x128256,1024x128256,140x128256,1024x100000
  done >> "$OUT/ab-O.txt" 2>&1
  lap "N/O round"
fi
