#!/usr/bin/env bash
# stop 45 device run 3 (H200): the final tree installed (sm_90); the CUDA
# tests of relu (op table reference now torch's CPU relu), tanh and the
# activations; memcheck and racecheck over the CUDA tanh tests; the
# bfloat16 activation rows of python -m hetkern.bench (tanh before: run 1b).
set -uo pipefail
R=$PWD
t0=$(date +%s)
source .gpu-carry/setup.sh >/dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > "$OUT/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/build.log"
cd /tmp
python3 -m hetkern > "$OUT/info.txt" 2>&1
OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" \
  -k "cuda and (relu or tanh or activation)" > "$OUT/cuda-pytest.txt" 2>&1
echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/cuda-pytest.txt"
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_activation.py" "$R/tests/test_opinfo.py" -k "cuda and tanh and not 6553 and not 6554" \
    > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s"; grep -E 'ERROR SUMMARY|passed|failed' "$OUT/$tool.txt" | tail -3
done
timeout 150 python3 -m hetkern.bench --device cuda --samples 9 --dtypes bfloat16,float16 --ops tanh,gelu_tanh,sigmoid \
  --time-cap 120 --out /tmp/act-bench > "$OUT/act-bench.txt" 2>&1
echo "bench rc=$? $(( $(date +%s) - t0 )) s"
python3 -m hetkern.bench.report /tmp/act-bench/results.json > "$OUT/act-SUMMARY.md" 2>&1
grep -E "^\| tanh " "$OUT/act-SUMMARY.md"
