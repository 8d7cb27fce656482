#!/usr/bin/env bash
# gnorm's final device run: build, norm tests, graph probe of every norm op, memcheck.
set -uo pipefail
R=$(cd "$(dirname "$0")" && pwd)
cd "$R"
source .gpu-carry/setup.sh > "$OUT/setup.txt" 2>&1 || { echo setup failed; cat "$OUT/setup.txt"; exit 1; }
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" OMP_WAIT_POLICY=PASSIVE
step() { echo "=== $* ($(date +%T))"; }
step build
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > "$OUT/build.txt" 2>&1 \
  || { tail -30 "$OUT/build.txt"; exit 1; }
cd /tmp
python3 -m hetkern > "$OUT/info.txt" 2>&1
step pytest norm
timeout 80 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" \
  "$R/tests/test_strided.py" > "$OUT/pytest.txt" 2>&1; echo "exit $?"; tail -3 "$OUT/pytest.txt"
step graph_probe
timeout 100 python3 "$R/benchmarks/graph_probe.py" --ops \
  rmsnorm,fused_add_rmsnorm,gemma_rmsnorm,gemma_fused_add_rmsnorm,layernorm,rmsnorm_quant,fused_add_rmsnorm_quant,layernorm_quant \
  > "$OUT/graph_probe.txt" 2>&1; echo "exit $?"
step pytest opinfo large
timeout 35 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests/test_opinfo.py" "$R/tests/test_large.py" -k norm \
  > "$OUT/pytest-opinfo-large.txt" 2>&1; echo "exit $?"; tail -3 "$OUT/pytest-opinfo-large.txt"
step memcheck
timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_norm.py" -k "cuda_llm_shapes or cuda_misaligned or cuda_in_place" \
  > "$OUT/sanitizer-memcheck.txt" 2>&1; echo "memcheck exit $?"; grep -E "ERROR SUMMARY|passed|failed" "$OUT/sanitizer-memcheck.txt"
step done
cat "$OUT/graph_probe.txt"
