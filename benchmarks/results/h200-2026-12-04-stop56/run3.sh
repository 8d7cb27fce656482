#!/usr/bin/env bash
# stop 56 device run 3 (a fresh machine; the device time left is ~500 s):
# the tree as committed (norm.cu: 3 blocks an SM at 4 packs but 16-bit
# layernorm_quant and float64; softmax.cu: run 2's), built with meson for
# sm_90, then in order of need: the CUDA tests of the norm, quant norm and
# softmax files, the table GELU and the > 2^31-element activation tests;
# memcheck over the row-count tests of the new block shapes; the probe of
# the changed rows.
set -uo pipefail
R=$PWD
t0=$(date +%s)
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
meson setup /tmp/b -Dgpu_archs=90 --buildtype=release > "$OUT/build.log" 2>&1 && ninja -C /tmp/b >> "$OUT/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
export HETKERN_LIBRARY=/tmp/b/src/libhetkern.so PYTHONPATH=$R/python
cd /tmp
timeout 150 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" \
  "$R/tests/test_softmax.py" "$R/tests/test_activation.py" "$R/tests/test_large.py" \
  -k "cuda or gelu_table or (test_large and activation)" 2>&1 | tail -4 | tee "$OUT/pytest.txt"
echo "tests $(( $(date +%s) - t0 )) s"
timeout 50 python3 "$R/benchmarks/graph_probe.py" --dtype bfloat16 --ops rmsnorm_quant,layernorm,layernorm_quant \
  --shapes 4096x16384 --buffers 4 2>&1 | tee "$OUT/probe.txt"
echo "probe $(( $(date +%s) - t0 )) s"
timeout 60 compute-sanitizer --tool memcheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_norm.py" -k "row_bits and (8192 or 16384)" 2>&1 | tail -3 | tee "$OUT/memcheck.txt"
echo "done $(( $(date +%s) - t0 )) s"
