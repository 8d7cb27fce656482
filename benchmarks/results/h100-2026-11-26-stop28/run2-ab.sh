#!/usr/bin/env bash
# Device run 2 of stop 28: A/B of this tree (B) against ab-base/ (A): run 1's
# norm.cu with the per-row quant scale for decode calls only, and HEAD's
# reduce.cu. B drops the quant kernels' NaN-sign restoration (3 instructions
# a value) and reduces a block's segments 4 at a time (one barrier pair a
# batch). Both libraries built with meson, picked by HETKERN_LIBRARY; each
# graph_probe pass times hetkern, the peers and a copy. Then every CUDA/GPU
# test on B, and compute-sanitizer memcheck/racecheck over the norm tests'
# whole-SM rows and the reduction tests.
# Usage on the device: bash <this> (carry .gpu-carry).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/work; mkdir -p $W
t0=$(date +%s)
rm -rf /tmp/base /tmp/bA /tmp/bB && cp -r "$R" /tmp/base && cp -r "$R"/ab-base/src/. /tmp/base/src/ && rm -rf /tmp/base/ab-base
(cd "$R" && meson setup /tmp/bB -Dgpu_archs=90 --buildtype=release > $W/setupB.log 2>&1 && ninja -C /tmp/bB > $W/buildB.log 2>&1; echo "B: $?") &
(cd /tmp/base && meson setup /tmp/bA -Dgpu_archs=90 --buildtype=release > $W/setupA.log 2>&1 && ninja -C /tmp/bA > $W/buildA.log 2>&1; echo "A: $?") &
wait
ls /tmp/bA/src/libhetkern.so /tmp/bB/src/libhetkern.so || { tail -20 $W/setup*.log $W/build*.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
export PYTHONPATH="$R/python"
cd /tmp
probe() {  # library, args...
  local lib=$1; shift
  HETKERN_LIBRARY=/tmp/b$lib/src/libhetkern.so python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$lib /"
}
for lib in A B A B; do
  probe $lib --dtype bfloat16 --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 16384x4096,4096x16384,1x4096,128x4096
  probe $lib --dtype float32 --ops layernorm_quant,rmsnorm_quant --shapes 16384x4096
  probe $lib --dtype bfloat16 --ops sum,max,norm,dot --shapes 1x16777216,1x67108864
  probe $lib --dtype float32 --ops sum,max,norm --shapes 1x67108864
done > $OUT/ab.txt
echo "probe $(( $(date +%s)-t0 )) s"
export HETKERN_LIBRARY=/tmp/bB/src/libhetkern.so
OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" -k "cuda or gpu or cupy or jax" 2>&1 | tail -4 > $OUT/cuda-pytest.txt
cat $OUT/cuda-pytest.txt
echo "cuda tests $(( $(date +%s)-t0 )) s"
for tool in memcheck racecheck; do
  timeout 170 compute-sanitizer --tool "$tool" --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" "$R/tests/test_reduce.py" \
    -k "(cuda_matches_reference and (float32 or bfloat16)) or (cuda and (8196 or 32768)) or cuda_matches_torch or cuda_huge" \
    > "$W/sanitizer-$tool.log" 2>&1
  echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$W/sanitizer-$tool.log" | tr '\n' ' ')" | tee -a $OUT/sanitizers.txt
done
echo "total $(( $(date +%s)-t0 )) s"
