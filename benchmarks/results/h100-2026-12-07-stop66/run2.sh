#!/usr/bin/env bash
# Stop 66, device calls 2 and 3: what landing stop 64's B needs, after run 1
# (../unmeasured-2026-12-07-stop65-rope-and-spills/run1.sh) showed B ahead of
# main on the large bf16 layernorm_quant shapes and C and D behind.
#   run 2:  V=B bash run2.sh
#   run 3:  V=F ROUNDS=1 BF16_LARGE=1 RACECHECK_S=200 bash run2.sh
#     (F = B, except that float16's split layernorm kernels keep main's
#     division test a value: B's spilled 32 bytes and ran 7 % slower at
#     float16 2048 x 32768 in run 2)
# 1. V against A (ROUNDS rounds) where B spills and A does not: 2-pack bf16
#    layernorm_quant rows x 512/1536/3584; float16 layernorm_quant, whose
#    split kernel spills 32 bytes in B; with BF16_LARGE=1 the bf16 quant
#    norms' large shapes too;
# 2. V's norm and quant-norm CUDA tests;
# 3. memcheck and racecheck over the norm row kernels on V.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab}.
set -uo pipefail
V=${V:?V=B or F}
source tools/device-ab-env.sh A "$V"
for round in $(seq "${ROUNDS:-2}"); do for side in A $V; do
  probe $side --buffers 4 --ops layernorm_quant --shapes 16384x512,16384x3584,16384x1536
  [ "${BF16_LARGE:-0}" = 1 ] && probe $side --buffers 4 --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant \
    --shapes 16384x4096,4096x16384,16384x16384
  probe $side --buffers 4 --dtype float16 --ops layernorm_quant,rmsnorm_quant --shapes 16384x4096,4096x16384,2048x32768
done; done >> "$OUT/ab-$V.txt" 2>&1
lap "spill shapes"
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/$V.so OMP_WAIT_POLICY=PASSIVE timeout 150 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" -k cuda > "$OUT/cuda-pytest-$V.txt" 2>&1
 echo "$V norm and quant-norm tests rc=$?: $(grep -E 'passed|failed' "$OUT/cuda-pytest-$V.txt" | tail -n 1)") | tee -a "$OUT/laps.txt"
SANITIZE_TIMEOUT=280 sanitize "$V" memcheck norm
SANITIZE_TIMEOUT=${RACECHECK_S:-280} sanitize "$V" racecheck norm
lap sanitized
