#!/usr/bin/env bash
# Run 5: the final norm.cu (F2 = run 4's F with the decode calls' parameters
# loaded after the row's, as B5 loaded them; its decode kernels' PTX is B5's
# but for the 10 layernorm_quant ones, its other kernels' PTX is F's) against
# A, as in run 4: probe of the decode shapes, the CUDA/GPU norm tests,
# racecheck and memcheck.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/v; rm -rf $W; mkdir -p $W; start=$(date +%s)
(cd "$R" && meson setup $W/build-f2 -Dgpu_archs=90 --buildtype=release > $W/f.log 2>&1 && ninja -C $W/build-f2 >> $W/f.log 2>&1) \
  || { tail -30 $W/f.log; exit 1; }
python3 - "$R" $W <<'PY'
import json, shutil, subprocess, sys
repo, w = sys.argv[1], sys.argv[2]
cmds = json.load(open(f"{w}/build-f2/compile_commands.json"))
c = next(c for c in cmds if c["file"].endswith("src/cuda/norm.cu"))
link = subprocess.run(["ninja", "-C", f"{w}/build-f2", "-t", "commands", "src/libhetkern.so"],
                      capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
shutil.copytree(f"{w}/build-f2", f"{w}/build-a", symlinks=True)
src = f"{repo}/ab-base/variants/a.cu"
subprocess.run(c["command"].replace(c["file"], src), shell=True, cwd=f"{w}/build-a", check=True, capture_output=True)
subprocess.run(link, shell=True, cwd=f"{w}/build-a", check=True)
PY
echo "built in $(( $(date +%s) - start )) s"
cd /tmp
for rep in 1 2; do for side in a f2; do
  lib=$W/build-$side/src/libhetkern.so
  HETKERN_LIBRARY=$lib PYTHONPATH="$R/python" python3 "$R/benchmarks/graph_probe.py" \
    --ops fused_add_rmsnorm,layernorm,rmsnorm,gemma_fused_add_rmsnorm,gemma_rmsnorm \
    --shapes 1x2048,1x4096,8x4096,32x4096,128x4096,1x8192,128x8192 2>&1 | sed "s/^/$side /"
  HETKERN_LIBRARY=$lib PYTHONPATH="$R/python" python3 "$R/benchmarks/graph_probe.py" \
    --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 1x4096,128x4096 2>&1 | sed "s/^/$side /"
done; done | tee "$OUT/run5-probe.txt"
echo "probed in $(( $(date +%s) - start )) s"
export HETKERN_LIBRARY=$W/build-f2/src/libhetkern.so PYTHONPATH="$R/python"
OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" \
  -k "(cuda or gpu) and (norm or rms)" 2>&1 | tail -2 | tee "$OUT/run5-norm-pytest.txt"
timeout 90 compute-sanitizer --tool racecheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_norm.py" -k "row_bits and (3072 or 4096)" 2>&1 | tail -3 | tee "$OUT/run5-racecheck.txt"
timeout 90 compute-sanitizer --tool memcheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_norm.py" "$R/tests/test_norm_quant.py" -k "cuda_llm_shapes or cuda_graph or (cuda and 4096)" 2>&1 | tail -3 | tee "$OUT/run5-memcheck.txt"
echo "done in $(( $(date +%s) - start )) s"
