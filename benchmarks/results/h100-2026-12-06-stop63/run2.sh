#!/usr/bin/env bash
# stop 63 device run 2 (the same H100 as run 1, warm): the bfloat16 peers
# table of main (tools/gpu-ab prebuild's A = 4846430), every family, as
# the command line ran it. Carry: .gpu-carry/{setup.sh,whl,peers,
# packagecache,deb,ab/A.so.xz}.
source .gpu-carry/setup.sh >/dev/null 2>&1; mkdir -p /tmp/ab && xz -dc .gpu-carry/ab/A.so.xz > /tmp/ab/main.so && t0=$(date +%s) && SKIP_BUILD=1 HETKERN_LIBRARY=/tmp/ab/main.so PYTHONPATH=$PWD/python PEER_DTYPE=bfloat16 OUT=/tmp/pb timeout 570 tools/gpu-check peers > /tmp/pb.log 2>&1; echo "peers rc=$? $(( $(date +%s) - t0 )) s"; cp /tmp/pb/bf16-peers-SUMMARY.md $OUT/; xz -T0 -c /tmp/pb/bf16-peers.tar > $OUT/bf16-peers.tar.xz; tail -5 /tmp/pb.log; nvidia-smi -L; grep -c '✘' $OUT/bf16-peers-SUMMARY.md; grep '✘' $OUT/bf16-peers-SUMMARY.md | cut -c1-180
