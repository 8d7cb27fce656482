#!/usr/bin/env bash
# Run 6: F3 = run 5's F2 with the decode form of the loads (RegisterPacks)
# only in rmsnorm, gemma_rmsnorm and layernorm; the fused and quant kernels
# load as at the start but keep the direct sums at decode. F3 (this tree)
# against A and F2 on those decode shapes, then the CUDA/GPU norm tests and
# racecheck on F3.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/v; rm -rf $W; mkdir -p $W; start=$(date +%s)
(cd "$R" && meson setup $W/build-f3 -Dgpu_archs=90 --buildtype=release > $W/f.log 2>&1 && ninja -C $W/build-f3 >> $W/f.log 2>&1) \
  || { tail -30 $W/f.log; exit 1; }
python3 - "$R" $W <<'PY'
import json, shutil, subprocess, sys
repo, w = sys.argv[1], sys.argv[2]
cmds = json.load(open(f"{w}/build-f3/compile_commands.json"))
c = next(c for c in cmds if c["file"].endswith("src/cuda/norm.cu"))
link = subprocess.run(["ninja", "-C", f"{w}/build-f3", "-t", "commands", "src/libhetkern.so"],
                      capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
for name in ("a", "f2"):
    shutil.copytree(f"{w}/build-f3", f"{w}/build-{name}", symlinks=True)
    src = f"{repo}/ab-base/variants/{name}.cu"
    subprocess.run(c["command"].replace(c["file"], src), shell=True, cwd=f"{w}/build-{name}", check=True, capture_output=True)
    subprocess.run(link, shell=True, cwd=f"{w}/build-{name}", check=True)
PY
echo "built in $(( $(date +%s) - start )) s"
cd /tmp
for rep in 1 2; do for side in a f2 f3; do
  lib=$W/build-$side/src/libhetkern.so
  HETKERN_LIBRARY=$lib PYTHONPATH="$R/python" python3 "$R/benchmarks/graph_probe.py" \
    --ops fused_add_rmsnorm,gemma_fused_add_rmsnorm,rmsnorm,layernorm \
    --shapes 1x2048,1x4096,8x4096,32x4096,128x4096,1x8192,128x8192 2>&1 | sed "s/^/$side /"
  HETKERN_LIBRARY=$lib PYTHONPATH="$R/python" python3 "$R/benchmarks/graph_probe.py" \
    --ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 1x4096,128x4096 2>&1 | sed "s/^/$side /"
done; done | tee "$OUT/run6-probe.txt"
echo "probed in $(( $(date +%s) - start )) s"
export HETKERN_LIBRARY=$W/build-f3/src/libhetkern.so PYTHONPATH="$R/python"
OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -p no:cacheprovider -n 14 "$R/tests" \
  -k "(cuda or gpu) and (norm or rms)" 2>&1 | tail -2 | tee "$OUT/run6-norm-pytest.txt"
timeout 90 compute-sanitizer --tool racecheck --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
  "$R/tests/test_norm.py" -k "row_bits and (3072 or 4096)" 2>&1 | tail -3 | tee "$OUT/run6-racecheck.txt"
echo "done in $(( $(date +%s) - start )) s"
