#!/usr/bin/env bash
# Stop 70 (not run), device call 2, about 400 s, on LIB (default P; run it
# if run1.sh's N against P favoured P):
# the norm, quant-norm, large and strided CUDA tests, then memcheck and
# racecheck over the layernorm and layernorm_quant calls of
# tools/sanitize-rows.py, then graph replay N against LIB once more.
# Carry as run1.sh's.
set -uo pipefail
lib=${LIB:-P}
source tools/device-ab-env.sh N "$lib"
run_tests "$lib" 200 "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" "$R/tests/test_large.py" \
  "$R/tests/test_strided.py" -k "cuda or gpu"
lap tested
export SANITIZE_TIMEOUT=150
for tool in memcheck racecheck; do sanitize "$lib" $tool layernorm,layernorm_quant; done
lap sanitized
for side in N "$lib"; do
  probe $side --buffers 2 --rounds 2 --dtype float32 --ops layernorm \
    --shapes 4096x16384,8192x16384,16384x16384,256x16384,4096x12288
done > "$OUT/ab-$lib-2.txt" 2>&1
lap "N against $lib"
