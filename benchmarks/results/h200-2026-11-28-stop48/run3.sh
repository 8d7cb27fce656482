#!/usr/bin/env bash
# stop 48 device run 3 (H200): the probe's input sets with each set's result
# held until its next turn (harness.in_turn, this tree) against the
# committed in_turn that dropped it (allocating peers then wrote one output
# for every set), the same library (this tree's), in one run.
set -uo pipefail
R=$PWD
t0=$(date +%s)
sets=('--buffers 4 --dtype float32 --ops silu_and_mul,gelu_tanh_and_mul --shapes 64x8192,128x8192,128x14336'
      '--buffers 4 --dtype bfloat16 --ops silu_and_mul --shapes 128x8192,128x14336'
      '--buffers 4 --dtype float32 --ops rmsnorm,layernorm --shapes 128x4096,1024x4096'
      '--buffers 4 --dtype float32 --ops softmax --shapes 64x32000,256x32000')
REPS=1 timeout 420 tools/variants src/cuda/activation.cu "${sets[@]}" > "$OUT/variants-log.txt" 2>&1
echo "held (tree) rc=$? $(( $(date +%s) - t0 )) s"
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
rm -rf /tmp/oldpy && cp -r "$R/python" /tmp/oldpy && cp "$R/ab-base/oldharness/harness.py" /tmp/oldpy/hetkern/bench/harness.py
cd /tmp
for args in "${sets[@]}"; do
  # shellcheck disable=SC2086
  HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH=/tmp/oldpy \
    timeout 120 python3 "$R/benchmarks/graph_probe.py" $args 2>&1 | sed "s/^/dropped /"
done | tee "$OUT/dropped.txt"
echo "dropped done $(( $(date +%s) - t0 )) s"
cat "$OUT/variants.txt"
