#!/usr/bin/env bash
# Device run 1 of stop 28: A/B of this tree (B) against HEAD's norm.cu and
# reduce.cu (A, from ab-base/): float32 rows of 16384 held by a whole SM's
# 1024-thread block, the quant norms' scale reciprocal taken after the row's
# loads, the whole-array reductions' partials combined 8 loads at a time.
# Both libraries are built with meson and picked by HETKERN_LIBRARY; each
# graph_probe pass times hetkern, Liger, FlashInfer, torch and a copy.
# Then the CUDA norm/reduce tests on B and Nsight Compute on both.
# Usage on the device: bash <this> (carry .gpu-carry).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/work; mkdir -p $W
t0=$(date +%s)
rm -rf /tmp/base && cp -r "$R" /tmp/base && cp -r "$R"/ab-base/src/. /tmp/base/src/ && rm -rf /tmp/base/ab-base
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
  probe $lib --dtype float32 --ops layernorm,rmsnorm,gemma_rmsnorm --shapes 4096x16384
  probe $lib --dtype float32 --ops layernorm_quant,rmsnorm_quant --shapes 16384x4096
  probe $lib --dtype bfloat16 --ops layernorm,rmsnorm --shapes 16384x4096
  probe $lib --dtype bfloat16 --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 16384x4096,1x4096,128x4096
  probe $lib --dtype bfloat16 --ops sum,max,norm --shapes 1x67108864
done > $OUT/ab.txt
echo "probe $(( $(date +%s)-t0 )) s"
probe B --dtype bfloat16 --ops max,sum --shapes 1x67108864 --compile > $OUT/compile.txt
echo "compile probe $(( $(date +%s)-t0 )) s"
HETKERN_LIBRARY=/tmp/bB/src/libhetkern.so OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 14 \
  "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" "$R/tests/test_reduce.py" "$R/tests/test_large.py" -k "cuda or gpu" 2>&1 | tail -4 > $OUT/pytest.txt
cat $OUT/pytest.txt
echo "tests $(( $(date +%s)-t0 )) s"
if command -v ncu > /dev/null; then
  for lib in A B; do
    HETKERN_LIBRARY=/tmp/b$lib/src/libhetkern.so timeout 100 ncu --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats --kernel-name regex:"LayerNormKernel|RMSNormKernel|ReduceSegments|CombinePartials" --launch-skip 0 --launch-count 40 \
      python3 "$R/benchmarks/graph_probe.py" --ncu --ops layernorm_quant,layernorm,rmsnorm_quant,rmsnorm,sum --shapes 16384x4096,1x67108864 > $W/ncu-$lib.txt 2>&1
    echo "ncu $lib: exit $?"
  done
  tar czf $OUT/ncu.tgz -C $W ncu-A.txt ncu-B.txt
fi
echo "total $(( $(date +%s)-t0 )) s"
