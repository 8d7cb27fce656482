#!/usr/bin/env bash
# Run 1: decode norms. A = the session's start (ab-base/src/cuda/norm.cu),
# B = this tree (RegisterPacks: packs held as 32-bit words, parameters loaded
# after the row; RowSum's direct sum of the warp partials at decode), C = B
# without the direct sum (kDirectSums = false). A, B built with meson, C by
# recompiling norm.cu into a copy of B's build. Probed A B C A B C, then the
# CUDA norm tests on B, then the SASS of B's decode kernels.
set -uo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
source "$R/.gpu-carry/setup.sh" > /dev/null
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
W=/tmp/v; rm -rf $W; mkdir -p $W; start=$(date +%s)
cp -r "$R" $W/tree-a && cp -r "$R/ab-base/." $W/tree-a/ && rm -rf $W/tree-a/ab-base
build() { (cd "$1" && meson setup "$2" -Dgpu_archs=90 --buildtype=release > "$2.log" 2>&1 && ninja -C "$2" >> "$2.log" 2>&1; echo "$3: exit $?"); }
build $W/tree-a $W/build-a A & build "$R" $W/build-b B & wait
echo "built A, B in $(( $(date +%s) - start )) s"
# C: norm.cu without the direct sums, compiled with B's command into a copy of B's build.
cp -r $W/build-b $W/build-c
sed 's/constexpr bool kDirectSums = kGrid == RowGrid::kOneBlockPerSm;/constexpr bool kDirectSums = false;/' \
  "$R/src/cuda/norm.cu" > $W/norm-c.cu
grep -c "kDirectSums = false" $W/norm-c.cu
python3 - "$R" $W <<'PY'
import json, subprocess, sys
repo, w = sys.argv[1], sys.argv[2]
cmds = json.load(open(f"{w}/build-c/compile_commands.json"))
c = next(c for c in cmds if c["file"].endswith("src/cuda/norm.cu"))
cmd = c["command"].replace(c["file"], f"{w}/norm-c.cu")
assert f"{w}/norm-c.cu" in cmd
print(cmd[-200:])
subprocess.run(cmd, shell=True, cwd=f"{w}/build-c", check=True)
link = subprocess.run(["ninja", "-C", f"{w}/build-c", "-t", "commands", "src/libhetkern.so"],
                      capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
subprocess.run(link, shell=True, cwd=f"{w}/build-c", check=True)
PY
echo "C: exit $? ($(( $(date +%s) - start )) s)"
cd /tmp
OPS=fused_add_rmsnorm,layernorm,rmsnorm,gemma_fused_add_rmsnorm
SHAPES=1x2048,1x4096,32x4096,128x4096,1x8192,128x8192,16384x4096
for side in A B C A B C; do
  lib=$W/build-$(echo $side | tr ABC abc)/src/libhetkern.so
  HETKERN_LIBRARY=$lib PYTHONPATH="$R/python" python3 "$R/benchmarks/graph_probe.py" --ops $OPS --shapes $SHAPES 2>&1 | sed "s/^/$side /"
done | tee "$OUT/run1-abc.txt"
echo "probed in $(( $(date +%s) - start )) s"
HETKERN_LIBRARY=$W/build-b/src/libhetkern.so PYTHONPATH="$R/python" timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 \
  "$R/tests/test_norm.py" -k cuda 2>&1 | tail -3 | tee "$OUT/run1-norm-pytest.txt"
echo "tested in $(( $(date +%s) - start )) s"
cuobjdump -sass $W/build-b/src/libhetkern.so > /tmp/b.sass 2>/dev/null
for k in 'LayerNormKernelI13__nv_bfloat16S3_Li8ELi2ES3_LNS1_7RowGridE0' 'RMSNormKernelI13__nv_bfloat16S3_Li8ELi2ELb1ELb0ES3_LNS1_7RowGridE0'; do
  awk -v k="$k" '/Function :/{p=index($0,k)>0} p' /tmp/b.sass | head -400 > "$OUT/run1-sass-$(echo $k | cut -c1-14).txt"
done
ls -la $OUT
