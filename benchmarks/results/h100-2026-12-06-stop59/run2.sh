#!/usr/bin/env bash
# stop 59 device run 2. Run 1 kept only the 16-block float32 rows' exact
# packs (log_softmax 1x151936 9.30 -> 8.23 us); D = main (A) + that alone,
# built here on B's build dir and carried xz'd. Then: graph replay A D A D of
# the float32 vocabulary rows it reaches (and 1x128256, which it does not);
# memcheck and racecheck of tools/sanitize-rows.py's softmax calls on D;
# tests/test_softmax.py's CUDA tests on D; the bfloat16 peers table of D.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null 2>&1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A D; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/machine.txt"
HETKERN_LIBRARY=/tmp/ab/D.so python3 -m hetkern > "$OUT/info.txt" 2>&1
lap ready
probe() {  # A|D, graph_probe arguments...
  local side=$1; shift
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /"
}
timeout 120 bash -c "$(declare -f probe); for side in A D A D; do
  probe \$side --dtype float32 --ops softmax,log_softmax --shapes 1x128256,1x151936,1x180000,1x201088,1x262144
done" > "$OUT/ab.txt" 2>&1
lap probed
for tool in memcheck racecheck; do
  HETKERN_LIBRARY=/tmp/ab/D.so timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda softmax > "$OUT/sanitizer-$tool.log" 2>&1
  lap "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|calls checked' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
HETKERN_LIBRARY=/tmp/ab/D.so OMP_WAIT_POLICY=PASSIVE timeout 90 python3 -m pytest -q -p no:cacheprovider -n 15 \
  "$R/tests/test_softmax.py" -k cuda > "$OUT/softmax-pytest.txt" 2>&1
lap "softmax tests: $(tail -1 "$OUT/softmax-pytest.txt")"
cd "$R"
HETKERN_LIBRARY=/tmp/ab/D.so SKIP_BUILD=1 PEER_DTYPE=bfloat16 tools/gpu-check peers > "$OUT/peers-bf16.log" 2>&1
lap "peers: $(tail -3 "$OUT/peers-bf16.log" | tr '\n' ' ')"
