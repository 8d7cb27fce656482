# Two builds in one run: the tree as committed, then with the lean norm
# kernels of 2 packs a thread bounded to 4 blocks of 512 an SM (RowBlocksPerSm).
R=$PWD
source .gpu-carry/setup.sh
export HETKERN_BENCH_FLASHINFER=$R/.gpu-carry/peers
P=$R/benchmarks/results/h100-2026-11-25-regs
for build in shipped bound4; do
  if [ $build = bound4 ]; then
    sed -i 's/if (kLean) return kCache == 1 ? 4 : kCache == 2 ? 3 :/if (kLean) return kCache == 1 ? 4 : kCache == 2 ? 4 :/' src/cuda/norm.cu
    grep -q "kCache == 2 ? 4 :" src/cuda/norm.cu || { echo "patch failed"; exit 1; }
  fi
  python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build-$build.log 2>&1 || { tail -30 $OUT/build-$build.log; exit 1; }
  (cd /tmp && timeout 120 python3 $P/regs_probe.py $build 2>&1 | tee -a $OUT/regs_probe.txt)
done
