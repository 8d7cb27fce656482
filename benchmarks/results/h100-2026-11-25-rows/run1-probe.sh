#!/usr/bin/env bash
set -uo pipefail
source .gpu-carry/setup.sh > /dev/null || exit 1
I=$(python3 -c 'import tvm_ffi, os; print(os.path.dirname(tvm_ffi.__file__))')
mkdir -p /tmp/cfg/hetkern && sed -e 's/@VERSION@/0.1.0/;s/@WITH_CUDA@/1/;s/@CUDA_ARCHS@/90/' include/hetkern/config.h.in > /tmp/cfg/hetkern/config.h
cd .probe
build() { nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90,code=sm_90 -I.. -I/tmp/cfg -I../include -I$I/include "$@" normprobe.cu ../src/cuda/common.cu -L$I/lib -ltvm_ffi -Xlinker -rpath=$I/lib; }
build -DNORM_SRC='"norm_old.cu"' -o /tmp/old221 > /tmp/b1.log 2>&1 &
build -DNORM_SRC='"norm_v.cu"' -o /tmp/new221 > /tmp/b2.log 2>&1 &
build -DNORM_SRC='"norm_v.cu"' -DPB1=4 -DPB2=3 -DPB4=2 -o /tmp/new432 > /tmp/b3.log 2>&1 &
python3 liger.py > $OUT/liger.txt 2>&1
wait
for b in old221 new221 new432; do echo "== $b"; /tmp/$b || tail -5 /tmp/b*.log; done > $OUT/probe.txt 2>&1
cat $OUT/liger.txt; grep -c . $OUT/probe.txt
