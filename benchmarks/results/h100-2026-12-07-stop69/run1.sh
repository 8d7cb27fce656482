#!/usr/bin/env bash
# Prepared at stop 69, not run (the session's device time went on failed
# starts). Device call 1 of 2, about 450 s:
# 1. racecheck over the layernorm and layernorm_quant calls of
#    tools/sanitize-rows.py on N (main's library, .gpu-carry/ab/N.so.xz; stop
#    68's L changed layernorm_quant's grid and was not racechecked);
# 2. O (stop 68's unmeasured 512-thread softmax rows two an SM,
#    .gpu-carry/ab/O.so.xz, O.diff): graph replay N against O, twice, its
#    softmax CUDA tests, memcheck and racecheck over the softmax rows on O - all
#    that O needs to land if it wins.
# Then run2.sh (the float32 peers table) on N, or on O if O lands.
# Carry: .gpu-carry/{setup.sh,whl,peers,ab,packagecache}.
set -uo pipefail
export PROBE_TIMEOUT=60 SANITIZE_TIMEOUT=150
source tools/device-ab-env.sh N O
sanitize N racecheck layernorm,layernorm_quant
lap "N racecheck"
round() {
  for side in N O; do
    probe $side --buffers 2 --dtype float32 --ops softmax,log_softmax --shapes 4096x128256,1024x128256,140x128256,512x140000,1024x100000
    probe $side --buffers 2 --ops softmax,log_softmax --shapes 4096x128256,2048x250000,512x262144,2048x200000
  done >> "$OUT/ab-O.txt" 2>&1
}
round
lap "round 1"
run_tests O 150 "$R/tests/test_softmax.py" -k cuda
lap tested
for tool in memcheck racecheck; do sanitize O $tool softmax; done
lap sanitized
round
lap "round 2"
