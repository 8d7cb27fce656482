#!/usr/bin/env python3
"""Float32 erf-GELU on the CPU over every float32 input with |x| in
[2^-30, 20.5] (below, gelu(x) = x/2 to far under an ulp; beyond, x or -0),
per Highway target: the largest error in ulps against x * ndtr(x) in float64
(scipy), i.e. the number docs/activation.md bounds. About a minute per
target on one core; --step N checks every N-th input only.

    python tools/check-gelu-cpu.py [--targets AVX2,SSE4] [--step 1]
"""

import argparse
import time

import numpy as np
import scipy.special

import hetkern


def ulp(ref: np.ndarray) -> np.ndarray:
    exponent = np.frexp(np.abs(ref))[1]
    return np.ldexp(1.0, np.maximum(exponent - 24, -149))


def worst_error(step: int) -> tuple[float, float]:
    lo = int(np.float32(2.0**-30).view(np.uint32))
    hi = int(np.float32(20.5).view(np.uint32))
    worst, worst_x = 0.0, 0.0
    for sign in (0, 0x80000000):
        for start in range(lo, hi + 1, 1 << 24):
            bits = np.arange(start, min(start + (1 << 24), hi + 1), step, dtype=np.uint32) | np.uint32(sign)
            x = bits.view(np.float32)
            xd = x.astype(np.float64)
            ref = xd * scipy.special.ndtr(xd)
            err = np.abs(hetkern.gelu(x).astype(np.float64) - ref) / ulp(ref)
            i = int(np.argmax(err))
            if err[i] > worst:
                worst, worst_x = float(err[i]), float(x[i])
    return worst, worst_x


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--targets", default=",".join(hetkern.available_cpu_targets()))
    p.add_argument("--step", type=int, default=1)
    args = p.parse_args()
    for target in args.targets.split(","):
        hetkern.set_cpu_target(target)
        t0 = time.time()
        worst, x = worst_error(args.step)
        print(f"{target}: max {worst:.3f} ulp at x={x!r} (step {args.step}, {time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
