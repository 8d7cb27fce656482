# The landed tree on the H100, run 3: build, then the tests added after
# runs 1-2 (softmax rows of 5120/8192 values, 300 of them; norm row bits at
# x 512 and x 1024) with the tests of the same paths.
R=$PWD
source .gpu-carry/setup.sh
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
timeout 300 python3 -m pytest -q -n 12 -p no:cacheprovider $R/tests/test_softmax.py $R/tests/test_norm.py \
  -k "cuda_many_long_rows or row_bits_independent or cuda_llm_shapes or cuda_lengths" > $OUT/pytest-new.log 2>&1
echo "pytest rc=$?"; tail -3 $OUT/pytest-new.log
