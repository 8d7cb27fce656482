#!/usr/bin/env bash
# stop 57 device run 1 (an H100 came; the device tool picks): 5a1d394's kernels re-applied (norm.cu: 3 blocks an SM
# at 4 packs but 16-bit layernorm_quant and float64; softmax.cu: IsRowMax,
# 16-bit log_softmax rows of <= 16 values a thread on <= 256 threads bounded
# to 40 registers). B = the tree, installed with pip for sm_90; A = the same
# tree with ab-base/'s files (f490c41's norm.cu and softmax.cu), built with
# meson. Correctness first: the CUDA tests of every file the two kernels
# serve, then memcheck and racecheck over the row tests of the changed
# block shapes, then graph-replay A B A B (tools/gpu-ab's probe) of the rows
# 5a1d394's comments quote.
set -uo pipefail
R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
work=/tmp/gpu-ab
rm -rf "$work"; mkdir -p "$work"
cp -r "$R" "$work/tree-a" && cp -r ab-base/. "$work/tree-a/" && rm -rf "$work/tree-a/ab-base" "$work/tree-a/.venv"
(python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . \
   > "$OUT/build-b.log" 2>&1; echo "B (pip): exit $?") &
(cd "$work/tree-a" && meson setup "$work/build-a" -Dgpu_archs=90 --buildtype=release \
   > "$OUT/build-a.log" 2>&1 && ninja -C "$work/build-a" >> "$OUT/build-a.log" 2>&1; echo "A (meson): exit $?") &
wait
lap built
cd /tmp
python3 -m hetkern > "$OUT/info.txt" 2>&1
{ hostname; nvidia-smi -L; } > "$OUT/machine.txt"
timeout 200 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 14 \
  "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" "$R/tests/test_softmax.py" "$R/tests/test_large.py" \
  "$R/tests/test_opinfo.py" -k "cuda" 2>&1 | tail -6 | tee "$OUT/cuda-pytest.txt"
lap tested
for tool in memcheck racecheck; do
  timeout 75 compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" "$R/tests/test_softmax.py" \
    -k "cuda and (row_bits or vocabulary_rows or many_long_rows or few_rows or llm_shapes)" \
    > "$OUT/sanitizer-$tool.log" 2>&1
  lap "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
probe() {  # A|B, graph_probe arguments...
  local side=$1; shift
  if [ "$side" = A ]; then
    HETKERN_LIBRARY="$work/build-a/src/libhetkern.so" PYTHONPATH="$R/python" \
      timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/A /"
  else
    timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/B /"
  fi
}
for side in A B A B; do
  probe $side --dtype bfloat16 --ops log_softmax --shapes 16384x1024,16384x4096,16384x16384,4096x32000 --buffers 4
  probe $side --dtype bfloat16 --ops rmsnorm,rmsnorm_quant,layernorm,layernorm_quant --shapes 4096x16384,16384x16384 --buffers 4
  probe $side --dtype float32 --ops rmsnorm_quant,layernorm_quant,layernorm --shapes 4096x8192,16384x8192 --buffers 4
  probe $side --dtype float32 --ops log_softmax,softmax --shapes 1x151936,64x32000
  lap "pass $side"
done > "$OUT/ab.txt"
lap probed
