#!/usr/bin/env bash
# Run 2: decode norms, four norm.cu variants in one library build each:
# A = the session's start, B = this tree (no conditional loads into
# registers: ForCachedSlots; RegisterPacks of 32-bit words; direct sums of up
# to 8 warp partials), B3 = B with RegisterPacks holding P itself, B4 = B
# with direct sums of up to 16 partials. This tree is built with meson; each
# variant's norm.cu (ab-base/variants/) is compiled with the same command
# into a copy of that build and linked. Probed in turn twice, then the CUDA
# norm tests on B and the SASS of B's decode kernels.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/v; rm -rf $W; mkdir -p $W; start=$(date +%s)
(cd "$R" && meson setup $W/build-b -Dgpu_archs=90 --buildtype=release > $W/b.log 2>&1 && ninja -C $W/build-b >> $W/b.log 2>&1) \
  || { tail -30 $W/b.log; exit 1; }
echo "built B in $(( $(date +%s) - start )) s"
python3 - "$R" $W <<'PY'
import json, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
repo, w = sys.argv[1], sys.argv[2]
cmds = json.load(open(f"{w}/build-b/compile_commands.json"))
c = next(c for c in cmds if c["file"].endswith("src/cuda/norm.cu"))
link = subprocess.run(["ninja", "-C", f"{w}/build-b", "-t", "commands", "src/libhetkern.so"],
                      capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
def variant(name):
    d = f"{w}/build-{name}"
    shutil.copytree(f"{w}/build-b", d, symlinks=True)
    src = f"{repo}/ab-base/variants/{name}.cu"
    cmd = c["command"].replace(c["file"], src)
    assert src in cmd
    subprocess.run(cmd, shell=True, cwd=d, check=True)
    subprocess.run(link, shell=True, cwd=d, check=True)
    return name
with ThreadPoolExecutor(3) as ex:
    print("variants built:", list(ex.map(variant, ["a", "b3", "b4"])))
PY
echo "variants in $(( $(date +%s) - start )) s"
cd /tmp
OPS=fused_add_rmsnorm,layernorm,rmsnorm,gemma_fused_add_rmsnorm
SHAPES=1x2048,1x4096,32x4096,128x4096,1x8192,128x8192
for rep in 1 2; do for side in a b b3 b4; do
  HETKERN_LIBRARY=$W/build-$side/src/libhetkern.so PYTHONPATH="$R/python" \
    python3 "$R/benchmarks/graph_probe.py" --ops $OPS --shapes $SHAPES 2>&1 | sed "s/^/$side /"
done; done | tee "$OUT/run2-variants.txt"
echo "probed in $(( $(date +%s) - start )) s"
HETKERN_LIBRARY=$W/build-b/src/libhetkern.so PYTHONPATH="$R/python" timeout 200 python3 -m pytest -q -p no:cacheprovider -n 14 \
  "$R/tests/test_norm.py" -k cuda 2>&1 | tail -3 | tee "$OUT/run2-norm-pytest.txt"
echo "tested in $(( $(date +%s) - start )) s"
cuobjdump -sass $W/build-b/src/libhetkern.so > /tmp/b.sass 2>/dev/null
for k in 'LayerNormKernelI13__nv_bfloat16S3_Li8ELi2ES3_LNS1_7RowGridE0' 'RMSNormKernelI13__nv_bfloat16S3_Li8ELi2ELb1ELb0ES3_LNS1_7RowGridE0'; do
  awk -v k="$k" '/Function :/{p=index($0,k)>0} p' /tmp/b.sass | head -500 > "$OUT/run2-sass-$(echo $k | cut -c1-14).txt"
done
