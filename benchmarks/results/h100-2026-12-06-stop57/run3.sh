#!/usr/bin/env bash
# stop 57 device run 3, on the same warm machine with the session's last
# 262 s of device time: the CUDA tests of the three test files of the two
# changed kernels, whole, with their summary (run 2's wider set was cut at
# ~98 % by its timeout). As run from the device tool.
R=$PWD; source .gpu-carry/setup.sh >/dev/null; cd /tmp
timeout 235 env OMP_WAIT_POLICY=PASSIVE python3 -m pytest -q -p no:cacheprovider -n 15 $R/tests/test_norm.py \
  $R/tests/test_norm_quant.py $R/tests/test_softmax.py -k cuda > $OUT/cuda-pytest-3files.txt 2>&1
echo "rc=$?"; tail -3 $OUT/cuda-pytest-3files.txt
