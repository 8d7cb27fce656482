#!/usr/bin/env bash
# stop 42 device run 3 (warm, after run 2): the bfloat16 table against every
# GPU peer, with the new bench (4 input sets where a call does not fit L2).
set -uo pipefail
export OUT
# The bench's Python from this tree (run 2 installed an earlier tree's).
(source .gpu-carry/setup.sh >/dev/null
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
site=$(cd /tmp && python3 -c "import hetkern, os; print(os.path.dirname(hetkern.__file__))")
cp python/hetkern/bench/*.py "$site/bench/" && echo "bench code from this tree: $(grep -c copy_graph_s "$site/bench/runner.py")"
md5sum "$site/lib/libhetkern.so" /tmp/tree.so)
SKIP_BUILD=1 PEER_CAPS="25,activation=130,norm=290,softmax=105,rope=40" tools/gpu-check peers
echo "gpu-check rc=$?"
grep -c "✘" "$OUT/bf16-peers-SUMMARY.md"
