set -uo pipefail
R=$(pwd)
export TESTS='norm and (cuda or gpu)'
export SANITIZE='row_bits_independent and layernorm_quant and 2048'
REPS=2 tools/variants src/cuda/norm.cu \
  '--ops rmsnorm_quant,layernorm_quant --shapes 16384x4096,4096x16384 --dtype bfloat16'
cd /tmp
echo "== mutation (interleaved partials) must fail:"
HETKERN_LIBRARY=/tmp/variants/build-zmut/src/libhetkern.so PYTHONPATH=$R/python timeout 100 python3 -m pytest -q -p no:cacheprovider -n 8 $R/tests/test_norm_quant.py -k "row_bits_independent" 2>&1 | tail -8 | tee $OUT/zmut-pytest.txt
