#!/usr/bin/env bash
# stop 39 device run 5: the landed tree against (a) norm.cu without staged rows (94cd732's) on layernorm_quant,
# (b) rope.cu pipelined on the former grid of up to 16 blocks an SM ("pipe16") on rope.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
REPS=2 tools/variants src/cuda/norm.cu '--ops layernorm_quant --shapes 16384x16384,8192x16384,4096x16384,8192x12288,1024x16384'
mv $OUT/variants.txt $OUT/norm-variants.txt
w=/tmp/variants
python3 - "$R" <<'PY'
import json, shutil, subprocess, sys
R = sys.argv[1]; w = "/tmp/variants"; build = f"{w}/build-tree"
cmd = next(c for c in json.load(open(f"{build}/compile_commands.json")) if c["file"].endswith("src/cuda/rope.cu"))
link = subprocess.run(["ninja", "-C", build, "-t", "commands", "src/libhetkern.so"], capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
shutil.copytree(build, f"{w}/build-pipe16", symlinks=True)
subprocess.run(cmd["command"].replace(cmd["file"], f"{R}/ab-base/rope/pipe16.cu"), shell=True, cwd=f"{w}/build-pipe16", check=True)
subprocess.run(link, shell=True, cwd=f"{w}/build-pipe16", check=True)
print("built pipe16")
PY
cd /tmp
for rep in 1 2; do for name in tree pipe16; do
  HETKERN_LIBRARY=$w/build-$name/src/libhetkern.so PYTHONPATH=$R/python python3 $R/benchmarks/graph_probe.py \
    --ops rope --shapes 1024x0,2048x0,4096x0,8192x0,16384x0 2>&1 | sed "s/^/$name /"
done; done | tee $OUT/rope-variants.txt
HETKERN_LIBRARY=$w/build-pipe16/src/libhetkern.so PYTHONPATH=$R/python OMP_WAIT_POLICY=PASSIVE \
  timeout 60 python3 -m pytest -q -p no:cacheprovider -n 8 $R/tests/test_rope.py -k "cuda or gpu" 2>&1 | tail -1 | sed "s/^/pipe16 /" | tee $OUT/pipe16-tests.txt
