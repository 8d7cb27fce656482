#!/usr/bin/env bash
# stop 59 device run 1. No build on the device: A (main at 036a1ae) and B
# (main + this stop's softmax.cu: float32 cluster softmax keeps its exps,
# 16-block float32 rows on 5-8 packs a thread, 16-bit rows of 2-block
# clusters on 512 threads x 4 packs) were built here with meson
# (-Dgpu_archs=90, release; tools/gpu-ab prebuild) and carried xz'd in
# .gpu-carry/ab/, loaded through HETKERN_LIBRARY with this tree's python/;
# C = B with float32 rows of 16K-32K values on 2-block clusters of 1024
# threads x 4 packs instead of 512 x 8 (C.diff, built on B's build dir).
# Then: graph replay A B C A B C (benchmarks/graph_probe.py) of the softmax rows
# the change reaches; memcheck and racecheck of tools/sanitize-rows.py's
# softmax calls on B; every CUDA test of tests/ on B in the time left.
set -uo pipefail
export R=$PWD
t0=$(date +%s)
lap() { echo "$* $(( $(date +%s) - t0 )) s"; }
source .gpu-carry/setup.sh > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers" PYTHONPATH="$R/python"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
mkdir -p /tmp/ab && for s in A B C; do xz -dc ".gpu-carry/ab/$s.so.xz" > "/tmp/ab/$s.so"; done
cd /tmp
{ hostname; nvidia-smi -L; nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem --format=csv; } > "$OUT/machine.txt"
HETKERN_LIBRARY=/tmp/ab/B.so python3 -m hetkern > "$OUT/info.txt" 2>&1
lap ready
probe() {  # A|B, graph_probe arguments...
  local side=$1; shift
  HETKERN_LIBRARY=/tmp/ab/$side.so timeout 60 python3 "$R/benchmarks/graph_probe.py" "$@" 2>&1 | sed "s/^/$side /"
}
timeout 220 bash -c "$(declare -f probe); for pass in 1 2; do
  for side in A B; do
    probe \$side --dtype float32 --ops softmax,log_softmax --shapes 1x128256,1x151936,1x201088,32x32000,48x32000,64x32000,32x151936
    probe \$side --dtype bfloat16 --ops softmax,log_softmax --shapes 32x32000,48x32000,64x32000,1x151936
  done
  probe C --dtype float32 --ops softmax,log_softmax --shapes 48x32000,64x32000
  echo pass \$pass
done" > "$OUT/ab.txt" 2>&1
lap probed
for tool in memcheck racecheck; do
  HETKERN_LIBRARY=/tmp/ab/B.so timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 "$R/tools/sanitize-rows.py" cuda softmax > "$OUT/sanitizer-$tool.log" 2>&1
  lap "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|calls checked' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
done
HETKERN_LIBRARY=/tmp/ab/B.so OMP_WAIT_POLICY=PASSIVE timeout $(( 590 - ($(date +%s) - t0) )) python3 -m pytest -q -p no:cacheprovider -n 15 \
  "$R/tests" -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest.txt" 2>&1
lap "tests: $(tail -1 "$OUT/cuda-pytest.txt")"
