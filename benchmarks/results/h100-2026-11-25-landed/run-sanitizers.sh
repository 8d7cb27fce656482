# The landed tree on the H100, run 2: build, then every op of the op table on
# CUDA and the stream/graph tests under compute-sanitizer memcheck and
# racecheck (tools/gpu-check's selection).
R=$PWD
source .gpu-carry/setup.sh
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
cd /tmp
for tool in memcheck racecheck; do
  timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider $R/tests/test_opinfo.py $R/tests/test_concurrency.py \
    -k "cuda and not 6553 and not 6554" > $OUT/sanitizer-$tool.log 2>&1
  echo "$tool: exit $? ; $(grep -E 'ERROR SUMMARY|passed|failed' $OUT/sanitizer-$tool.log | tr '\n' ' ')"
done
