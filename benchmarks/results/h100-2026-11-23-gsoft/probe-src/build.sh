#!/bin/bash
# Builds the probe here (sm_90); the result runs on the device with libtvm_ffi.so beside it.
set -e
cd "$(dirname "$0")"
ROOT=..
TVM=$ROOT/.venv/lib/python3.11/site-packages/tvm_ffi
FLAGS="-O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Icfg -I$ROOT -I$ROOT/include -I$TVM/include"
for f in probe_softmax probe_act probe_scale main; do
  [ $f.o -nt $f.cu ] && [ $f.o -nt $ROOT/src/cuda/softmax.cu ] && [ $f.o -nt $ROOT/src/cuda/activation.cu ] && [ $f.o -nt $ROOT/src/cuda/elementwise.cuh ] && continue
  nvcc $FLAGS -Xptxas -v -c $f.cu -o $f.o $EXTRA 2> $f.ptxas &
done
[ common.o -nt $ROOT/src/cuda/common.cu ] || nvcc $FLAGS -c $ROOT/src/cuda/common.cu -o common.o &
wait
cp $TVM/lib/libtvm_ffi.so .
nvcc -arch=sm_90 -o probe main.o probe_softmax.o probe_act.o probe_scale.o common.o -L. -ltvm_ffi -Xlinker -rpath='$ORIGIN'
echo built
