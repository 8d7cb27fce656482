#!/usr/bin/env bash
# stop 43 device run 2 (warm, after run 1): the CUDA tests on the tree's
# library; racecheck and memcheck over the softmax tests of the cluster
# kernel and the rope tests.
set -uo pipefail
R=$PWD
t0=$(date +%s)
source .gpu-carry/setup.sh >/dev/null || { echo "carry setup failed"; exit 1; }
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
export PYTHONPATH="$R/python"
tree=/tmp/variants/build-tree/src/libhetkern.so
if [ ! -f $tree ]; then
  meson setup /tmp/variants/build-tree -Dgpu_archs=90 --buildtype=release > "$OUT/build.log" 2>&1 &&
    ninja -C /tmp/variants/build-tree >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
cd /tmp
export HETKERN_LIBRARY=$tree
python3 -m hetkern | head -4
OMP_WAIT_POLICY=PASSIVE timeout 240 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" \
  -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest.txt" 2>&1
echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/cuda-pytest.txt"
for tool in racecheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
    "$R/tests/test_softmax.py" "$R/tests/test_rope.py" -k "cuda and (vocabulary or few_rows or rope)" > "$OUT/$tool.txt" 2>&1
  echo "$tool rc=$? $(( $(date +%s) - t0 )) s"; tail -4 "$OUT/$tool.txt"
done
echo "done $(( $(date +%s) - t0 )) s"
