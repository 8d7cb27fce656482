#!/usr/bin/env bash
# Device run 3 of stop 26, on the 16-core host's CPU (AVX3_SPR) only: a
# CPU-only build, the softmax and reduction tests on every target this CPU
# has, then the benchmark of the ops this stop changed on the CPU with the
# thread sweep (1, 2, 4, 8, 16 threads).
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dcuda=disabled . > $OUT/cpu-build.log 2>&1 || { tail -30 $OUT/cpu-build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/cpu-info.txt
OMP_WAIT_POLICY=PASSIVE timeout 120 python3 -m pytest -q -p no:cacheprovider -n 8 "$R/tests/test_softmax.py" "$R/tests/test_reduce.py" \
  -k "not cuda" 2>&1 | tail -2 > $OUT/cpu-pytest.txt
cat $OUT/cpu-pytest.txt
echo "tests $(( $(date +%s)-t0 )) s"
timeout 210 python3 -m hetkern.bench --device cpu --ops softmax,log_softmax,sum_rows,max_rows,norm_rows,norm,dot_rows \
  --dtypes float32,bfloat16,float16 --cpu-max 16777216 --samples 7 --thread-sweep --out /tmp/hc > $OUT/cpu-bench.txt 2>&1
echo "cpu bench rc=$? $(( $(date +%s)-t0 )) s"
