#!/usr/bin/env bash
# Run 8, the final softmax.cu (the cluster kernel back on its select):
# installed with pip; the CUDA softmax tests; racecheck and memcheck over the
# register, shared-memory and cluster kernels' tests; a probe of the shapes
# each kernel takes.
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 "$R" > /tmp/pip.log 2>&1 || { tail -20 /tmp/pip.log; exit 1; }
cd /tmp
timeout 120 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests/test_softmax.py" -k cuda 2>&1 | tail -2 | tee "$OUT/softmax-pytest.txt"
timeout 130 compute-sanitizer --tool racecheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_softmax.py" -k "cuda and (many_long_rows or far_from_zero)" 2>&1 | tail -4 | tee "$OUT/racecheck.txt"
timeout 100 compute-sanitizer --tool memcheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_softmax.py" -k "cuda and (vocabulary or few_rows or lengths)" 2>&1 | tail -4 | tee "$OUT/memcheck.txt"
for dtype in bfloat16 float16; do
  python3 "$R/benchmarks/graph_probe.py" --dtype $dtype --ops softmax,log_softmax \
    --shapes 1x32000,32x32000,256x32000,4096x32000,1x128256,64x128256,4096x128256,1024x16384,16384x16384
done 2>&1 | tee "$OUT/probe.txt"
