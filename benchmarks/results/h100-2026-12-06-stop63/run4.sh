#!/usr/bin/env bash
# stop 63 device run 4 (the same H100, warm): the CUDA/GPU/CuPy/JAX tests of
# the last five test files on main, which xdist hands out last (run 3's
# timeout cut the run there).
source .gpu-carry/setup.sh >/dev/null 2>&1; mkdir -p /tmp/ab && xz -dc .gpu-carry/ab/A.so.xz > /tmp/ab/main.so; export PYTHONPATH=$PWD/python R=$PWD; cd /tmp && HETKERN_LIBRARY=/tmp/ab/main.so OMP_WAIT_POLICY=PASSIVE timeout 200 python3 -m pytest -q -rfE -p no:cacheprovider -n 15 $R/tests/test_rope.py $R/tests/test_scale.py $R/tests/test_softmax.py $R/tests/test_strided.py $R/tests/test_torch_ops.py -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest-main-tail.txt" 2>&1; echo "main tail tests rc=$?: $(tail -n 1 $OUT/cuda-pytest-main-tail.txt)"
