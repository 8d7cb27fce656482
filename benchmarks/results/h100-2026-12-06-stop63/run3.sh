#!/usr/bin/env bash
# stop 63 device run 3 (the same H100, warm): every CUDA/GPU/CuPy/JAX test
# on main (A = 4846430), cut by its 270 s timeout at 98 % with no failure.
source .gpu-carry/setup.sh >/dev/null 2>&1; mkdir -p /tmp/ab && xz -dc .gpu-carry/ab/A.so.xz > /tmp/ab/main.so; export PYTHONPATH=$PWD/python R=$PWD; cd /tmp && HETKERN_LIBRARY=/tmp/ab/main.so OMP_WAIT_POLICY=PASSIVE timeout 270 python3 -m pytest -q -rfE -p no:cacheprovider -n 15 "$R/tests" -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest-main.txt" 2>&1; echo "main tests rc=$?: $(tail -n 1 $OUT/cuda-pytest-main.txt)"; nvidia-smi -L
