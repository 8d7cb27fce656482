#!/usr/bin/env bash
# Builds, here, the libraries run1.sh times, into
# .gpu-carry/ab/ (run from the repository root, after
# ../shared/device/prepare-carry and ../shared/peers/prepare-peers; about
# 12 minutes on 2 cores): stop 64's A (HEAD), B and C, then
# D = HEAD + D.diff (C + float32 NeoX rope on 8 pairs a thread) and
# E = HEAD + E.diff (D + layernorm's parameters prefetched into L1). E is
# built for its SASS and left out of the carry (run1.sh does not run it:
# it spills; the tree and the carry must fit 64 MiB). Leaves the tree at
# HEAD.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/../unmeasured-2026-12-07-stop64-quant-norms/prepare.sh"
for v in D E; do
  git apply "$here/$v.diff"
  tools/gpu-ab variant $v
  git checkout -- src
done
mv .gpu-carry/ab/E.so.xz "${TMPDIR:-/tmp}/hetkern-E.so.xz"
echo "prepare.sh: .gpu-carry/ab holds A, B, C and D (E: ${TMPDIR:-/tmp}/hetkern-E.so.xz); the tree is at HEAD again"
