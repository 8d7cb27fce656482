#!/usr/bin/env bash
# Builds, here, the libraries run1.sh and run1-short.sh time, into
# .gpu-carry/ab/ (run from the repository root, after
# ../shared/device/prepare-carry and ../shared/peers/prepare-peers; about
# 12 minutes on 2 cores): stop 64's A (HEAD), B and C, then
# D = HEAD + D.diff (C + float32 NeoX rope on 8 pairs a thread) and
# E = HEAD + E.diff (D + layernorm's parameters prefetched into L1). D is
# built for its SASS and left out of the carry (the tree and the carry must
# fit 64 MiB; E holds D's rope). Leaves the tree at HEAD.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/../unmeasured-2026-12-07-stop64-quant-norms/prepare.sh"
for v in D E; do
  git apply "$here/$v.diff"
  tools/gpu-ab variant $v
  git checkout -- src
done
mv .gpu-carry/ab/D.so.xz "${TMPDIR:-/tmp}/hetkern-D.so.xz"
echo "prepare.sh: .gpu-carry/ab holds A, B, C and E (D: ${TMPDIR:-/tmp}/hetkern-D.so.xz); the tree is at HEAD again"
