# Run 2 of the norm row-shape experiment, on the tree before layernorm's
# one-warp rows landed, with one-warp.patch applied (git apply
# benchmarks/results/h100-2026-11-25-lnshape2/one-warp.patch): warp_probe.py,
# then the CUDA norm tests. Run 1 was the same script with ln-shape.patch
# applied instead and ln_probe.py in place of warp_probe.py (and no tests).
# HETKERN_LN_SHAPE and HETKERN_RMS_ONE_WARP exist only in those builds.
R=$PWD
source .gpu-carry/setup.sh
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
timeout 240 python3 $R/benchmarks/results/h100-2026-11-25-lnshape2/warp_probe.py 2>&1 | tee $OUT/warp_probe.txt
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests -k "norm and (cuda or gpu)" > $OUT/pytest_norm.txt 2>&1; tail -3 $OUT/pytest_norm.txt
