#!/usr/bin/env bash
# Run 9: warp-stall sampling (SASS) of the decode norms where hetkern trails
# (fused_add_rmsnorm 1x4096 and 128x4096, layernorm 1x4096; bfloat16):
# hetkern's kernels next to Liger's and FlashInfer's, to see whether their
# row loads wait on each other as softmax's did.
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 "$R" > /tmp/pip.log 2>&1 || { tail -20 /tmp/pip.log; exit 1; }
cd /tmp
for op in fused_add_rmsnorm layernorm; do
  shapes=1x4096; [ $op = fused_add_rmsnorm ] && shapes=1x4096,128x4096
  timeout 150 ncu --section SourceCounters --section WarpStateStats --section LaunchStats --section SpeedOfLight \
    --import-source no --kernel-name regex:"RMSNorm|LayerNorm|_rms_norm|_layer_norm|layer_norm" \
    -o /tmp/pc-$op -f python3 "$R/benchmarks/graph_probe.py" --ncu --ops $op --shapes $shapes > /tmp/ncu-$op.log 2>&1
  echo "ncu $op: exit $?"; grep -c "Profiling" /tmp/ncu-$op.log
  ncu --import /tmp/pc-$op.ncu-rep --page source --print-source sass --csv | gzip > "$OUT/source-$op.csv.gz"
done
