#!/usr/bin/env bash
# Device run 3 (prepared at stop 65, not run; warm): every CUDA/GPU/CuPy/JAX test on the library
# run 1 chose (V = A, B, C or D). Carry as run1.sh's.   V=C bash .../run3.sh
V=${V:?V=A, B, C or D}
source .gpu-carry/setup.sh >/dev/null 2>&1
mkdir -p /tmp/ab && xz -dc .gpu-carry/ab/$V.so.xz > /tmp/ab/$V.so
export PYTHONPATH=$PWD/python R=$PWD
cd /tmp && HETKERN_LIBRARY=/tmp/ab/$V.so OMP_WAIT_POLICY=PASSIVE timeout 540 python3 -m pytest -q -rfE -p no:cacheprovider \
  -n 15 "$R/tests" -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest-$V.txt" 2>&1
echo "$V tests rc=$?: $(tail -n 1 "$OUT/cuda-pytest-$V.txt")"; nvidia-smi -L
