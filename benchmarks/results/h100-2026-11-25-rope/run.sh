# Rope launch-shape experiment: apply rope-variants.patch first
# (git apply benchmarks/results/h100-2026-11-25-rope/rope-variants.patch);
# HETKERN_ROPE_VARIANT exists only in that build, not in the committed tree.
R=$PWD
source .gpu-carry/setup.sh
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
timeout 200 python3 $R/benchmarks/results/h100-2026-11-25-rope/rope_probe.py 2>&1 | tee $OUT/rope_probe_N.txt
