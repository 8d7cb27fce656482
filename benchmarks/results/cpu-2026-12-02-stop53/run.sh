#!/usr/bin/env bash
# stop 53, this machine (2 cores, AMD EPYC Zen 4, AVX3_ZEN4), the installed
# hetkern (main at 9dcd456's kernels): erf-GELU against torch 2.13's CPU
# kernel, speed at 1 and 2 threads, then accuracy.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd); cd /tmp
py=/work/main/.venv/bin/python
for t in 1 2; do
  $py -m hetkern.bench --device cpu --ops gelu,gelu_tanh,silu --dtypes float32,bfloat16 \
    --cpu-max 4194304 --threads $t --out '' 2>&1 | grep -E '^(op|gelu|silu)' | grep -E '^op|64K|256K|1M|4M'
done
$py "$here/gelu_accuracy.py"
