# Softmax register-row grid experiment: apply tiles.patch first
# (git apply benchmarks/results/h100-2026-11-25-smtiles/tiles.patch).
R=$PWD
source .gpu-carry/setup.sh
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
timeout 200 python3 $R/benchmarks/results/h100-2026-11-25-smtiles/tiles_probe.py 2>&1 | tee $OUT/tiles_probe.txt
