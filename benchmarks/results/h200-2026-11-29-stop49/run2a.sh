#!/usr/bin/env bash
# stop 49 device run 2a (H200): install the tree (layernorm rows split for
# every T == W dtype on large calls; float32 gelu / gelu_tanh gated two packs
# up to 1024 x SMs packs), the whole CUDA test suite, then memcheck and
# racecheck over the norm row-count bits tests (split rows) and the gated
# shape bits tests of gelu.
set -uo pipefail
R=$PWD
t0=$(date +%s)
source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > "$OUT/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/build.log"
cd /tmp
python3 -m hetkern > "$OUT/info.txt" 2>&1
OMP_WAIT_POLICY=PASSIVE timeout 240 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" -k cuda \
  > "$OUT/cuda-pytest.txt" 2>&1
echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/cuda-pytest.txt"
for tool in memcheck racecheck; do
  timeout 75 compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_norm.py" "$R/tests/test_activation.py" \
    -k "(cuda_row_bits_independent_of_row_count and layernorm and not float64) or (cuda_gated_bits_independent_of_shape and gelu and float32)" \
    > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' "$OUT/$tool.txt" | tail -3
done
