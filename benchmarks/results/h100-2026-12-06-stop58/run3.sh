#!/usr/bin/env bash
# stop 58 device run 3: main as it is (768b492; run 1's library A, built here
# with meson for sm_90 and carried xz'd) against every GPU peer, the bfloat16
# table of tools/gpu-check peers from this one run; first the SASS of A's two
# fp8 norm kernels that run 1 profiled (for counting their instructions).
export R=$PWD
mkdir -p /tmp/ab && xz -dc .gpu-carry/ab/A.so.xz > /tmp/ab/A.so
export HETKERN_LIBRARY=/tmp/ab/A.so PYTHONPATH=$R/python
timeout 90 cuobjdump -sass /tmp/ab/A.so 2>&1 | awk '/Function :/ {
  p = ($0 ~ /RMSNormKernelI13__nv_bfloat16S._Li8ELi4ELb0ELb0EhLNS1_7RowGridE1ELi1E|LayerNormKernelI13__nv_bfloat16S._Li8ELi4EhLNS1_7RowGridE1ELi1ELb0E/) }
  p' > "$OUT/sass-quant-bf16.txt"
echo "sass: $(grep -c 'Function :' "$OUT/sass-quant-bf16.txt") functions"
SKIP_BUILD=1 PEER_DTYPE=bfloat16 tools/gpu-check peers
