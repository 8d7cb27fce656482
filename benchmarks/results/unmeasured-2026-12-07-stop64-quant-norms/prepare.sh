#!/usr/bin/env bash
# Builds, here, the three libraries A, B and C into .gpu-carry/ab/ (run
# from the repository root, after ../shared/device/prepare-carry and
# ../shared/peers/prepare-peers; about 10 minutes on 2 cores):
#   A = HEAD, B = HEAD + B.diff, C = HEAD + C.diff (C.diff holds B's change).
# Leaves the tree at HEAD. Used by ../unmeasured-2026-12-07-stop65-rope-and-
# spills/prepare.sh, whose run1.sh times them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
git diff --quiet HEAD -- src include || { echo "prepare.sh: src/ or include/ has uncommitted changes"; exit 1; }
tools/gpu-ab prepare HEAD src/cuda/norm.cu src/cuda/quant_scale.cuh
git apply "$here/B.diff"
tools/gpu-ab prebuild
git checkout -- src
git apply "$here/C.diff"
tools/gpu-ab variant C
git checkout -- src
echo "prepare.sh: .gpu-carry/ab holds A, B and C; the tree is at HEAD again"
