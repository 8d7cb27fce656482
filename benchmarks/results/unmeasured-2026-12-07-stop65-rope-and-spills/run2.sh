#!/usr/bin/env bash
# Device run 2 (prepared at stop 65, not run; warm after run1.sh): the bfloat16 peers table of
# the library that run 1 chose (V = A, B, C or D, from .gpu-carry/ab), every
# family, as tools/gpu-check peers runs it. Carry as run1.sh's.
#   V=C bash .../run2.sh
V=${V:?V=A, B, C or D}
source .gpu-carry/setup.sh >/dev/null 2>&1
mkdir -p /tmp/ab && xz -dc .gpu-carry/ab/$V.so.xz > /tmp/ab/$V.so
t0=$(date +%s)
SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/$V.so PYTHONPATH=$PWD/python PEER_DTYPE=bfloat16 \
  PEER_CAPS=25,activation=170,norm=290,softmax=150,rope=40 OUT=/tmp/pb timeout 560 tools/gpu-check peers > /tmp/pb.log 2>&1
echo "peers rc=$? $(( $(date +%s) - t0 )) s"
cp /tmp/pb/bf16-peers-SUMMARY.md "$OUT/"; xz -T0 -c /tmp/pb/bf16-peers.tar > "$OUT/bf16-peers.tar.xz"
tail -n 5 /tmp/pb.log; nvidia-smi -L
echo "misses: $(grep -c '✘' "$OUT/bf16-peers-SUMMARY.md")"; grep '✘' "$OUT/bf16-peers-SUMMARY.md" | cut -c1-200
