#!/usr/bin/env bash
# Prepared at stop 68, not run (the session's device time was spent): every
# CUDA/GPU/CuPy/JAX test on N (as run2.sh), given the time it needs (runs 2
# and 2b were cut off at 193-195 s with 3325 passed, 0 failed, 51 not
# finished), with per-test durations, so that the slowest are known. Then,
# in what is left of the call, racecheck over the norm rows on N.
# Carry as run2.sh's. Run 3 (racecheck and the float32 table) may follow.
set -uo pipefail
export SANITIZE_TIMEOUT=170
source tools/device-ab-env.sh N
run_tests N 400 --durations=25 "$R/tests" -k "cuda or gpu or cupy or jax"
lap tested
sanitize N racecheck norm
lap sanitized
