#!/usr/bin/env bash
# stop 40 device run 5: main as it stands (no CUDA change this stop; stop 39's narrowed staging never ran on
# the device): build, every CUDA/GPU/CuPy/JAX test.
set -uo pipefail
R=$(pwd)
source .gpu-carry/setup.sh > /dev/null || exit 1
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s)-t0 )) s"
cd /tmp
python3 -m hetkern > $OUT/info.txt
OMP_WAIT_POLICY=PASSIVE timeout 440 python3 -m pytest -q -p no:cacheprovider -n 14 $R/tests -k "cuda or gpu or cupy or jax" > $OUT/cuda-pytest.txt 2>&1
echo "pytest rc=$?"; tail -4 $OUT/cuda-pytest.txt
echo "done $(( $(date +%s)-t0 )) s"
