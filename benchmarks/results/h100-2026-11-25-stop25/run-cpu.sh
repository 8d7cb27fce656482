#!/usr/bin/env bash
# Device run 2 of stop 25, on the 16-core host's CPU (AVX3_SPR: avx512_bf16 and
# avx512_fp16): the CPU tests of what changed here on every target this CPU
# has (cast's fast path, softmax's row groups), then issue 13's benchmark with
# the thread sweep. Builds only when hetkern is not installed yet.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
(cd /tmp && python3 -c "import hetkern") 2>/dev/null || \
  python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/cpu-info.txt
OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 "$R/tests/test_softmax.py" "$R/tests/test_elementwise.py" \
  -k "not cuda" 2>&1 | tail -5 > $OUT/cpu-pytest.txt
cat $OUT/cpu-pytest.txt
echo "tests $(( $(date +%s)-t0 )) s"
timeout 330 python3 -m hetkern.bench --device cpu --ops rmsnorm,silu_and_mul,softmax,log_softmax,gelu,cast_bf16 \
  --dtypes float32,bfloat16,float16 --cpu-max 16777216 --samples 9 --thread-sweep --out /tmp/hc > $OUT/cpu-bench.txt 2>&1
echo "cpu bench rc=$? $(( $(date +%s)-t0 )) s"
tar -C /tmp/hc -cf $OUT/cpu-bench.tar . 2>/dev/null
