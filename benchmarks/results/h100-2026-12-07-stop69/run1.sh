#!/usr/bin/env bash
# Stop 69, device call 1 (after this stop's first call, run0, ran the CUDA suite
# on N to its end and cut racecheck over all 243 norm calls off at 170 s):
# 1. the float32 peers table on N (main's library, .gpu-carry/ab/N.so.xz);
# 2. racecheck over the layernorm and layernorm_quant calls of
#    tools/sanitize-rows.py on N (stop 68's L changed layernorm_quant's grid);
# 3. with what is left, graph replay N against O (stop 68's unmeasured
#    512-thread softmax rows two an SM, .gpu-carry/ab/O.so.xz).
# Carry: .gpu-carry/{setup.sh,whl,peers,ab,packagecache}.
set -uo pipefail
export PROBE_TIMEOUT=60 SANITIZE_TIMEOUT=150
source tools/device-ab-env.sh N O
SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/N.so PEER_DTYPE=float32 \
  PEER_CAPS=25,activation=170,norm=290,softmax=150,rope=40 OUT=/tmp/pf \
  timeout 420 tools/gpu-check peers > /tmp/pf.log 2>&1
echo "f32 peers rc=$?" | tee -a "$OUT/laps.txt"
lap "f32 peers"
cp /tmp/pf/f32-peers-SUMMARY.md /tmp/pf/f32-peers-bench.txt "$OUT/"
xz -T0 -c /tmp/pf/f32-peers.tar > "$OUT/f32-peers.tar.xz"
echo "misses: $(grep -c '✘' "$OUT/f32-peers-SUMMARY.md")" | tee -a "$OUT/laps.txt"
sanitize N racecheck layernorm,layernorm_quant
lap "racecheck"
if (( $(date +%s) - ab_t0 < 470 )); then
  for side in N O; do
    probe $side --buffers 2 --dtype float32 --ops softmax --shapes 4096x128256,1024x128256,140x128256,1024x100000
    probe $side --buffers 2 --ops softmax --shapes 2048x250000,2048x200000
  done >> "$OUT/ab-O.txt" 2>&1
  lap "N/O round"
fi
