#!/usr/bin/env bash
# stop 46 device run 1b (warm, after 1a): the float32 table against every
# GPU peer on the H200 (Liger, torch eager, torch.compile; FlashInfer's
# kernels are bfloat16), main's library as 1a built it.
set -uo pipefail
R=$PWD
t0=$(date +%s)
source .gpu-carry/setup.sh >/dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_LIBRARY=/tmp/variants/build-tree/src/libhetkern.so PYTHONPATH="$R/python"
cd /tmp
python3 -m hetkern > "$OUT/info.txt" 2>&1
timeout 540 python3 -m hetkern.bench --device cuda --samples 9 --dtypes float32 \
  --family activation,norm,softmax,rope --time-cap 25,activation=120,norm=210,softmax=110,rope=35 \
  --out /tmp/f32-peers > "$OUT/f32-peers-bench.txt" 2>&1
echo "bench rc=$? $(( $(date +%s) - t0 )) s"
python3 -m hetkern.bench.report /tmp/f32-peers/results.json > "$OUT/f32-peers-SUMMARY.md" 2>&1
tar -C /tmp/f32-peers -cf "$OUT/f32-peers.tar" .
grep -c "✘" "$OUT/f32-peers-SUMMARY.md"
