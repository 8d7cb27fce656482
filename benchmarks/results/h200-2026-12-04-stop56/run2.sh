#!/usr/bin/env bash
# stop 56 device run 2, on run 1's machine and build (/tmp/variants/build-tree).
# softmax.cu as now committed is compiled into that build (its compile
# command from compile_commands.json, then the link): run 1's lb40 bound
# limited to rows of <= 16 values a thread in blocks of <= 256 threads, and
# the cluster kernel's kept exps dropped (no gain in run 1). Then norm.cu's
# b3 variant against the tree (run 1 timed out building it), with the
# softmax, table-GELU and > 2^31-element activation CUDA tests on the tree;
# then the tree's softmax rows of run 1, and memcheck over the softmax
# tests of long and vocabulary rows.
set -uo pipefail
R=$PWD
t0=$(date +%s)
root=$OUT
mkdir -p "$root/norm" "$root/softmax"
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
build=/tmp/variants/build-tree
(cd "$build" &&
  python3 -c "import json; print(next(c['command'] for c in json.load(open('compile_commands.json')) if c['file'].endswith('src/cuda/softmax.cu')))" | sh &&
  ninja -t commands src/libhetkern.so | tail -1 | sh) > "$root/softmax/rebuild.log" 2>&1
echo "softmax rebuilt rc=$? $(( $(date +%s) - t0 )) s"
OUT=$root/norm REUSE=1 REPS=2 \
  TESTS='(test_softmax and cuda) or gelu_table or (test_large and activation)' \
  timeout 330 tools/variants src/cuda/norm.cu \
  '--dtype bfloat16 --ops rmsnorm,rmsnorm_quant,layernorm,layernorm_quant --shapes 4096x16384,16384x16384 --buffers 4' \
  '--dtype float32 --ops rmsnorm,rmsnorm_quant,layernorm,layernorm_quant --shapes 4096x8192,16384x8192 --buffers 4' \
  > "$root/norm/log.txt" 2>&1
echo "norm rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$root/norm/log.txt"
cd /tmp
export HETKERN_LIBRARY=$build/src/libhetkern.so PYTHONPATH=$R/python
for args in '--dtype bfloat16 --ops log_softmax --shapes 16384x1024,16384x4096,16384x8192,16384x16384 --buffers 4' \
            '--dtype float16 --ops log_softmax --shapes 16384x1024,16384x4096 --buffers 4' \
            '--dtype float32 --ops log_softmax,softmax --shapes 1x151936,64x32000'; do
  timeout 60 python3 "$R/benchmarks/graph_probe.py" $args
done 2>&1 | tee "$root/softmax/probe.txt"
echo "probe $(( $(date +%s) - t0 )) s"
timeout 90 compute-sanitizer --tool memcheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_softmax.py" -k "cuda and (few_rows or vocabulary_rows or many_long_rows)" 2>&1 | tail -3 |
  tee "$root/softmax/memcheck.txt"
echo "done $(( $(date +%s) - t0 )) s"
