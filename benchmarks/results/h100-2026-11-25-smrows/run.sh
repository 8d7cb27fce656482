# Two builds in one run: as committed, then with rows256.patch applied
# (the run that measured it copied the patched file over src/cuda/softmax.cu).
R=$PWD
source .gpu-carry/setup.sh
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
P=$R/benchmarks/results/h100-2026-11-25-smrows
for build in shipped rows256; do
  [ $build = rows256 ] && patch -p1 < $P/rows256.patch
  python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build-$build.log 2>&1 || { tail -30 $OUT/build-$build.log; exit 1; }
  (cd /tmp && timeout 130 python3 $P/rows_probe.py $build 2>&1 | tee -a $OUT/rows_probe.txt)
done
