# layernorm row-shape experiment: apply ln-shape.patch first (git apply
# benchmarks/results/h100-2026-11-25-lnshape2/ln-shape.patch);
# HETKERN_LN_SHAPE exists only in that build, not in the committed tree.
R=$PWD
source .gpu-carry/setup.sh
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
timeout 240 python3 $R/benchmarks/results/h100-2026-11-25-lnshape2/warp_probe.py 2>&1 | tee $OUT/warp_probe.txt
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider $R/tests -k "norm and (cuda or gpu)" > $OUT/pytest_norm.txt 2>&1; tail -3 $OUT/pytest_norm.txt
