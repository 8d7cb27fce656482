#!/usr/bin/env bash
# Run 4: the final norm.cu (F: the decode form of RegisterPacks only for
# RowGrid::kOneBlockPerSm, parameters loaded before the row as at the start;
# large calls keep the start's loads) against A (the start) and B5 (run 3's
# tree: every kernel on the decode form, parameters after the row), built as
# in run 2. Then the CUDA/GPU norm tests (every test file) on F, racecheck
# over the direct sums' row-count test, memcheck over the LLM shapes and
# graph replay.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/v; rm -rf $W; mkdir -p $W; start=$(date +%s)
(cd "$R" && meson setup $W/build-f -Dgpu_archs=90 --buildtype=release > $W/f.log 2>&1 && ninja -C $W/build-f >> $W/f.log 2>&1) \
  || { tail -30 $W/f.log; exit 1; }
echo "built F in $(( $(date +%s) - start )) s"
python3 - "$R" $W <<'PY'
import json, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
repo, w = sys.argv[1], sys.argv[2]
cmds = json.load(open(f"{w}/build-f/compile_commands.json"))
c = next(c for c in cmds if c["file"].endswith("src/cuda/norm.cu"))
link = subprocess.run(["ninja", "-C", f"{w}/build-f", "-t", "commands", "src/libhetkern.so"],
                      capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
def variant(name):
    d = f"{w}/build-{name}"
    shutil.copytree(f"{w}/build-f", d, symlinks=True)
    src = f"{repo}/ab-base/variants/{name}.cu"
    cmd = c["command"].replace(c["file"], src)
    assert src in cmd
    subprocess.run(cmd, shell=True, cwd=d, check=True, capture_output=True)
    subprocess.run(link, shell=True, cwd=d, check=True)
    return name
with ThreadPoolExecutor(2) as ex:
    print("variants built:", list(ex.map(variant, ["a", "b5"])))
PY
echo "variants in $(( $(date +%s) - start )) s"
cd /tmp
for rep in 1 2; do for side in a b5 f; do
  lib=$W/build-$side/src/libhetkern.so
  HETKERN_LIBRARY=$lib PYTHONPATH="$R/python" python3 "$R/benchmarks/graph_probe.py" \
    --ops fused_add_rmsnorm,layernorm,rmsnorm,gemma_fused_add_rmsnorm \
    --shapes 1x2048,1x4096,32x4096,128x4096,1x8192,128x8192,16384x4096,4096x16384 2>&1 | sed "s/^/$side /"
  HETKERN_LIBRARY=$lib PYTHONPATH="$R/python" python3 "$R/benchmarks/graph_probe.py" \
    --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 1x4096,128x4096,16384x4096,4096x4096 2>&1 | sed "s/^/$side /"
done; done | tee "$OUT/run4-variants.txt"
echo "probed in $(( $(date +%s) - start )) s"
export HETKERN_LIBRARY=$W/build-f/src/libhetkern.so PYTHONPATH="$R/python"
OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" \
  -k "(cuda or gpu) and (norm or rms)" 2>&1 | tail -3 | tee "$OUT/run4-norm-pytest.txt"
echo "tested in $(( $(date +%s) - start )) s"
timeout 90 compute-sanitizer --tool racecheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_norm.py" -k "row_bits and (3072 or 4096)" 2>&1 | tail -4 | tee "$OUT/run4-racecheck.txt"
timeout 90 compute-sanitizer --tool memcheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_norm.py" -k "cuda_llm_shapes or cuda_graph" 2>&1 | tail -4 | tee "$OUT/run4-memcheck.txt"
echo "done in $(( $(date +%s) - start )) s"
