#!/bin/bash
# Device run 1: the softmax launch-shape probe and the float32 GELU variants
# (tools/check-activations.cu). Run from the repository root with .gpu-carry.
set -u
source .gpu-carry/setup.sh
TI=$(python3 -c "import tvm_ffi.libinfo as l; print(l.find_include_path())")
TL=$(dirname "$(python3 -c "import tvm_ffi.libinfo as l; print(l.find_libtvm_ffi())")")
mkdir -p /tmp/pinc/hetkern
printf '#pragma once\n#define HETKERN_VERSION "probe"\n#define HETKERN_WITH_CUDA 1\n#define HETKERN_CUDA_ARCHS "90"\n' > /tmp/pinc/hetkern/config.h
D=benchmarks/results/h100-2026-11-25-stop27
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader > "$OUT/info.txt"
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90a -I. -I/tmp/pinc -I"$TI" "$D/softmax_probe.cu" src/cuda/common.cu \
  -L"$TL" -ltvm_ffi -Xlinker -rpath="$TL" -o /tmp/softmax_probe > "$OUT/probe-build.log" 2>&1 &
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90a -I. -I/tmp/pinc -I"$TI" tools/check-activations.cu \
  -o /tmp/check-activations > "$OUT/ca-build.log" 2>&1
/tmp/check-activations 2>&1 | tee "$OUT/check-activations.txt"
wait
/tmp/softmax_probe 2>&1 | tee "$OUT/softmax-probe.txt"
