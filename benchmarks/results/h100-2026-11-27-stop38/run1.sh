set -uo pipefail
R=$(pwd)
export TESTS='test_norm_quant and (row_bits or many_row or layernorm_quant or strided or nan)'
export SANITIZE='row_bits_independent and layernorm_quant and 2048'
REPS=2 tools/variants src/cuda/norm.cu \
  '--ops layernorm_quant,rmsnorm_quant,fused_add_rmsnorm_quant --shapes 1x4096,128x4096,16384x4096,4096x16384 --dtype bfloat16' \
  '--ops layernorm,rmsnorm,fused_add_rmsnorm --shapes 1x4096,16384x4096 --dtype bfloat16' \
  '--ops layernorm_quant --shapes 16384x4096,4096x4096 --dtype float32'
cd /tmp
echo "== mutation (interleaved partials) must fail:"
HETKERN_LIBRARY=/tmp/variants/build-zmut/src/libhetkern.so PYTHONPATH=$R/python timeout 100 python3 -m pytest -q -p no:cacheprovider -n 8 $R/tests/test_norm_quant.py -k "row_bits_independent" 2>&1 | tail -8 | tee $OUT/zmut-pytest.txt
