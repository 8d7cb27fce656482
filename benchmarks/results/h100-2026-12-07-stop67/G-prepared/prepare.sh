#!/usr/bin/env bash
# Builds, here, M = main and G = main + G.diff into .gpu-carry/ab/ (after
# ../shared/device/prepare-carry and ../shared/peers/prepare-peers; about
# 12 minutes on 2 cores). Leaves the tree at HEAD. Where stop 66's
# .gpu-carry/ab/F.so.xz (main at c661b4b) and G.so.xz survive, skip this
# and run run.sh with M=F.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
git diff --quiet HEAD -- src include tools || { echo "prepare.sh: src/, include/ or tools/ has uncommitted changes"; exit 1; }
tools/gpu-ab prepare HEAD src/cuda/softmax.cu
tools/gpu-ab prebuild                     # A and B: both main
cp .gpu-carry/ab/B.so.xz .gpu-carry/ab/M.so.xz
git apply --include='src/*' "$here/G.diff"
tools/gpu-ab variant G
git checkout -- src
echo "prepare.sh: .gpu-carry/ab holds M (main) and G; the tree is at HEAD again"
