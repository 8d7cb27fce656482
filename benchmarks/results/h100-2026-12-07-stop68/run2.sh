#!/usr/bin/env bash
# Stop 68, device call 2: main's library after run 1 (N = .gpu-carry/ab/N.so.xz,
# built from 4fae267's src/ and include/): issue 11's bfloat16 peers table,
# every family, as tools/gpu-check peers runs it; then every
# CUDA/GPU/CuPy/JAX test, and memcheck over the norm rows. Carry: .gpu-carry/{setup.sh,whl,peers,ab}.
set -uo pipefail
V=N
source .gpu-carry/setup.sh >/dev/null 2>&1
mkdir -p /tmp/ab && xz -dc .gpu-carry/ab/$V.so.xz > /tmp/ab/$V.so
{ hostname; nvidia-smi -L; } > "$OUT/machine.txt" 2>&1
t0=$(date +%s)
SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/$V.so PYTHONPATH=$PWD/python PEER_DTYPE=bfloat16 \
  PEER_CAPS=25,activation=170,norm=290,softmax=150,rope=40 OUT=/tmp/pb timeout 400 tools/gpu-check peers > /tmp/pb.log 2>&1
echo "peers rc=$? $(( $(date +%s) - t0 )) s" | tee "$OUT/laps.txt"
cp /tmp/pb/bf16-peers-SUMMARY.md "$OUT/"; xz -T0 -c /tmp/pb/bf16-peers.tar > "$OUT/bf16-peers.tar.xz"
tail -n 5 /tmp/pb.log
echo "misses: $(grep -c '✘' "$OUT/bf16-peers-SUMMARY.md")" | tee -a "$OUT/laps.txt"
grep '✘' "$OUT/bf16-peers-SUMMARY.md" | cut -c1-200
export PYTHONPATH=$PWD/python R=$PWD
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/$V.so OMP_WAIT_POLICY=PASSIVE timeout $(( 565 - ($(date +%s) - t0) )) python3 -m pytest -q -rfE \
  -p no:cacheprovider -n 15 "$R/tests" -k "cuda or gpu or cupy or jax" > "$OUT/cuda-pytest-$V.txt" 2>&1
 echo "$V tests rc=$?: $(tail -n 1 "$OUT/cuda-pytest-$V.txt") $(( $(date +%s) - t0 )) s") | tee -a "$OUT/laps.txt"
# memcheck over the norm row kernels' launch shapes (L changed layernorm_quant's grid)
(cd /tmp && HETKERN_LIBRARY=/tmp/ab/$V.so timeout $(( 595 - ($(date +%s) - t0) )) compute-sanitizer --tool memcheck \
  --error-exitcode 9 python3 "$R/tools/sanitize-rows.py" cuda norm > "$OUT/sanitizer-memcheck-$V.txt" 2>&1
 echo "$V memcheck rc=$?: $(grep -E 'calls checked|SUMMARY' "$OUT/sanitizer-memcheck-$V.txt" | tr '\n' ' ') $(( $(date +%s) - t0 )) s") | tee -a "$OUT/laps.txt"
