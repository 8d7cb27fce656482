#!/usr/bin/env bash
# stop 42 device run 1: build; the float32 large sizes of every GPU family
# (the bench now graph-times calls that do not fit L2 on 4 input sets);
# layernorm_quant and rope probed with 1 and 4 input sets.
set -uo pipefail
R=$PWD
source .gpu-carry/setup.sh >/dev/null || { echo "carry setup failed"; exit 1; }
export HETKERN_BENCH_FLASHINFER="$R/.gpu-carry/peers"
export PATH="$(python3 -c 'import sys, os; print(os.path.dirname(sys.executable))'):$PATH"
echo "build $(date +%T)"
python3 -m pip install -q --no-build-isolation --no-deps -Csetup-args=-Dgpu_archs=90 . >"$OUT/run1-build.log" 2>&1 \
  || { tail -40 "$OUT/run1-build.log"; exit 1; }
cd /tmp
python3 -m hetkern > "$OUT/run1-info.txt"
echo "probe $(date +%T)"
for b in 4 1; do
  timeout 120 python3 "$R/benchmarks/graph_probe.py" --ops layernorm_quant,rmsnorm_quant \
    --shapes 4096x16384,16384x4096,16384x16384 --buffers $b 2>&1 | sed "s/^/b$b /"
  timeout 60 python3 "$R/benchmarks/graph_probe.py" --ops rope --shapes 4096x0,16384x0 --buffers $b 2>&1 | sed "s/^/b$b /"
done | tee "$OUT/run1-probe.txt"
echo "float32 large $(date +%T)"
timeout 330 python3 -m hetkern.bench --device cuda --samples 9 --dtypes float32 \
  --family elementwise,activation,norm,softmax,rope,reduce \
  --time-cap "40,elementwise=70,activation=70" --out /tmp/f32 > "$OUT/run1-f32-bench.txt" 2>&1
echo "bench: exit $?"
python3 -m hetkern.bench.report /tmp/f32/results.json > "$OUT/run1-f32-SUMMARY.md"
tar -C /tmp/f32 -cf "$OUT/run1-f32.tar" .
grep -c "✘" "$OUT/run1-f32-SUMMARY.md"
echo "done $(date +%T)"
