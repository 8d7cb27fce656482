#!/usr/bin/env bash
# stop 61 device run 4 (the session's last 321 s of device time): X = main
# (run 2's), Y = X + the cluster kernel's float32 softmax terms on one path
# for every row (ClusterTerm: exp2f(fma(v - s, log2 e, c)); B's two paths
# doubled the kernel's unrolled code). Graph replay X Y X Y of the cluster
# rows; Y's accuracy; Y's softmax tests if time is left.
set -uo pipefail
export R=$PWD
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in X Y; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
nvidia-smi -L > "$OUT/machine.txt"
HETKERN_LIBRARY=/tmp/ab/Y.so timeout 25 python3 "$R/benchmarks/softmax_accuracy.py" > "$OUT/accuracy-Y.txt" 2>&1 &
for pass in 1 2; do
  for s in X Y; do
    HETKERN_LIBRARY=/tmp/ab/$s.so timeout 30 python3 "$R/benchmarks/graph_probe.py" --dtype float32 --ops softmax \
      --shapes 1x32000,24x32000,32x32000,48x32000,64x32000,1x128256,1x151936 2>&1 | sed "s/^/$s /"
  done
done > "$OUT/ab.txt" 2>&1
wait
HETKERN_LIBRARY=/tmp/ab/Y.so OMP_WAIT_POLICY=PASSIVE timeout 45 python3 -m pytest -q -p no:cacheprovider -n 8 \
  "$R/tests/test_softmax.py" -k "cuda and float32" > "$OUT/softmax-pytest-Y.txt" 2>&1
echo "Y float32 softmax tests: $(tail -n 1 "$OUT/softmax-pytest-Y.txt")"
grep -E "^[XY] softmax " "$OUT/ab.txt" | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}' | sort -k4,4 -s
grep "softmax " "$OUT/accuracy-Y.txt" | grep -v log_ | head -20
