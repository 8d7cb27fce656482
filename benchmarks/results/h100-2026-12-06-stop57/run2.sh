#!/usr/bin/env bash
# stop 57 device run 2, on run 1's warm machine (run 1 timed out at 600 s:
# its build took most of it): B (run 1's pip install) against A (run 1's
# meson build of f490c41's norm.cu and softmax.cu), B A B, on the norm rows;
# the CUDA tests of run 1 again with more time; memcheck and racecheck over a
# narrower selection. As run from the device tool (one command line there).
R=$PWD; source .gpu-carry/setup.sh >/dev/null; export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
export PATH="$(python3 -c 'import sys,os;print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s); cd /tmp; { hostname; nvidia-smi -L; } > $OUT/machine.txt
for s in B A B; do
  if [ $s = A ]; then export HETKERN_LIBRARY=/tmp/gpu-ab/build-a/src/libhetkern.so PYTHONPATH=$R/python
  else unset HETKERN_LIBRARY PYTHONPATH; fi
  timeout 50 python3 $R/benchmarks/graph_probe.py --dtype bfloat16 --ops rmsnorm_quant,layernorm,layernorm_quant \
    --shapes 4096x16384,16384x16384 --buffers 4 2>&1 | sed "s/^/$s /"
  timeout 30 python3 $R/benchmarks/graph_probe.py --dtype float32 --ops rmsnorm_quant,layernorm_quant \
    --shapes 4096x8192 --buffers 4 2>&1 | sed "s/^/$s /"
done > $OUT/ab2.txt
unset HETKERN_LIBRARY PYTHONPATH; echo "probe $(( $(date +%s)-t0 )) s" | tee -a $OUT/ab2.txt
timeout 250 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 15 $R/tests/test_norm.py \
  $R/tests/test_norm_quant.py $R/tests/test_softmax.py $R/tests/test_large.py $R/tests/test_opinfo.py -k cuda 2>&1 |
  tail -4 > $OUT/cuda-pytest.txt
echo "tests $(( $(date +%s)-t0 )) s" | tee -a $OUT/cuda-pytest.txt
for tool in memcheck racecheck; do
  timeout 95 compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
    $R/tests/test_norm.py $R/tests/test_softmax.py -k "cuda and ((row_bits and (16384 or 8192)) or vocabulary_rows)" \
    > $OUT/sanitizer-$tool.log 2>&1
  echo "$tool rc=$? $(( $(date +%s)-t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' $OUT/sanitizer-$tool.log | tr '\n' ' ')"
done | tee $OUT/sanitizers.txt
