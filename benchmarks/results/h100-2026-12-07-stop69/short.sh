#!/usr/bin/env bash
# Prepared at stop 69, not run: the short form of run1.sh and run2.sh, for a session
# left with about 250 s of device time: 1. the float32 table of issue 14's
# new norms on N (main's library) against FlashInfer, torch eager and
# torch.compile, graph replay and the Python loop; 2. racecheck over the
# layernorm and layernorm_quant calls of tools/sanitize-rows.py on N with what
# is left of CALL_SECONDS (default 230).
set -uo pipefail
export SANITIZE_TIMEOUT=120
call=${CALL_SECONDS:-230}
source tools/device-ab-env.sh N
ops=gemma_rmsnorm,gemma_fused_add_rmsnorm,rmsnorm_quant,fused_add_rmsnorm_quant,layernorm_quant
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/N.so timeout $(( call - 90 )) python3 -m hetkern.bench --device cuda \
  --samples 9 --dtypes float32 --family norm --ops $ops --time-cap "25,norm=$(( call - 120 ))" \
  --out /tmp/pf > "$OUT/f32-new-norms-bench.txt" 2>&1)
echo "f32 new norms rc=$?" | tee -a "$OUT/laps.txt"
lap "f32 new norms"
(cd /tmp && python3 -m hetkern.bench.report /tmp/pf/results.json > "$OUT/f32-new-norms-SUMMARY.md")
xz -T0 -c /tmp/pf/results.json > "$OUT/f32-new-norms-results.json.xz"
echo "misses: $(grep -c '✘' "$OUT/f32-new-norms-SUMMARY.md")" | tee -a "$OUT/laps.txt"
SANITIZE_TIMEOUT=$(( call - ($(date +%s) - ab_t0) - 5 )) sanitize N racecheck layernorm,layernorm_quant
lap "racecheck"
