#!/usr/bin/env bash
set -uo pipefail
source .gpu-carry/setup.sh > /dev/null || exit 1
I=$(python3 -c 'import tvm_ffi, os; print(os.path.dirname(tvm_ffi.__file__))')
mkdir -p /tmp/cfg/hetkern && sed -e 's/@VERSION@/0.1.0/;s/@WITH_CUDA@/1/;s/@CUDA_ARCHS@/90/' include/hetkern/config.h.in > /tmp/cfg/hetkern/config.h
cd .probe
build() { nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90,code=sm_90 -I.. -I/tmp/cfg -I../include -I$I/include "$@" ../src/cuda/common.cu -L$I/lib -ltvm_ffi -Xlinker -rpath=$I/lib; }
build -DNORM_SRC='"old/norm.cu"' qprobe.cu -o /tmp/qold > /tmp/b1.log 2>&1 &
build -DNORM_SRC='"src/cuda/norm.cu"' qprobe.cu -o /tmp/qnew > /tmp/b2.log 2>&1 &
build rprobe.cu -o /tmp/rope > /tmp/b3.log 2>&1 &
wait
for b in qold qnew rope; do echo "== $b"; /tmp/$b || tail -5 /tmp/b*.log; done > $OUT/probe.txt 2>&1
cat $OUT/probe.txt
