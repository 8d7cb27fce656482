#!/usr/bin/env bash
# Stop 70 (not run), device call 1, about 580 s:
# 1. the float32 peers table (every family: torch eager, torch.compile, Liger,
#    FlashInfer; graph replay and the Python loop) on N (main's library,
#    .gpu-carry/ab/N.so.xz);
# 2. racecheck over the layernorm and layernorm_quant calls of
#    tools/sanitize-rows.py on N (stop 68's L changed layernorm_quant's grid;
#    memcheck passed then), at most 110 s;
# 3. with the time left, graph replay of float32 layernorm's split whole-SM
#    rows, N against P (P.diff: those rows one block an SM with weight and
#    bias in registers, 123 registers, no spills).
# Carry: .gpu-carry/{setup.sh,whl,peers,ab,packagecache}.
# CALL_SECONDS (default 580): the call's limit; under 500 the table's
# per-family caps shrink so that it ends in time, under 400 it is the norm
# family's alone (issue 14's new ops).
set -uo pipefail
call=${CALL_SECONDS:-580}
caps=25,activation=170,norm=290,softmax=150,rope=40
[ "$call" -lt 500 ] && caps=20,activation=120,norm=210,softmax=100,rope=30
[ "$call" -lt 400 ] && { caps=20,norm=240; export PEER_FAMILIES=norm; }
source tools/device-ab-env.sh N P
SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/N.so PEER_DTYPE=float32 \
  PEER_CAPS=$caps OUT=/tmp/pf \
  timeout $(( call - 40 < 420 ? call - 40 : 420 )) tools/gpu-check peers > /tmp/pf.log 2>&1
echo "f32 peers on N rc=$?" | tee -a "$OUT/laps.txt"
lap "f32 peers"
cp /tmp/pf/f32-peers-SUMMARY.md /tmp/pf/f32-peers-bench.txt "$OUT/"
xz -T0 -c /tmp/pf/f32-peers.tar > "$OUT/f32-peers.tar.xz"
echo "misses: $(grep -c '✘' "$OUT/f32-peers-SUMMARY.md")" | tee -a "$OUT/laps.txt"
left=$(seconds_left "$call")
[ "$left" -ge 20 ] || exit 0
SANITIZE_TIMEOUT=$(( left < 110 ? left : 110 )) sanitize N racecheck layernorm,layernorm_quant
lap racecheck
left=$(seconds_left "$call")
[ "$left" -ge 40 ] || exit 0
for side in N P N P; do
  PROBE_TIMEOUT=$(( left / 4 )) probe $side --buffers 2 --dtype float32 --ops layernorm \
    --shapes 4096x16384,16384x16384,256x16384,4096x12288
done > "$OUT/ab-P.txt" 2>&1
lap "N against P"
