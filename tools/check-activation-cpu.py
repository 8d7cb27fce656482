#!/usr/bin/env python3
"""Float32 erf-GELU and tanh on the CPU over every float32 input of both
signs with |x| in [2^-30, end] (gelu: 20.5, tanh: 10.5; below 2^-30 gelu(x)
= x/2 and tanh(x) = x to far under an ulp, beyond it gelu is x or -0 and
tanh +-1), per Highway target: the largest error in ulps against float64
references (x * scipy's ndtr(x), numpy's tanh), i.e. the numbers
docs/activation.md bounds. About 15 s per op and target on one core; --step
N checks every N-th input only.

    python tools/check-activation-cpu.py [--ops gelu,tanh] [--targets AVX2,SSE4] [--step 1]
"""

import argparse
import time

import numpy as np
import scipy.special

import hetkern

OPS = {
    "gelu": (20.5, hetkern.gelu, lambda x: x * scipy.special.ndtr(x)),
    "tanh": (10.5, hetkern.tanh, np.tanh),
}


def ulp(ref: np.ndarray) -> np.ndarray:
    exponent = np.frexp(np.abs(ref))[1]
    return np.ldexp(1.0, np.maximum(exponent - 24, -149))


def worst_error(op: str, step: int) -> tuple[float, float]:
    end, fn, reference = OPS[op]
    lo = int(np.float32(2.0**-30).view(np.uint32))
    hi = int(np.float32(end).view(np.uint32))
    worst, worst_x = 0.0, 0.0
    for sign in (0, 0x80000000):
        for start in range(lo, hi + 1, 1 << 24):
            bits = np.arange(start, min(start + (1 << 24), hi + 1), step, dtype=np.uint32) | np.uint32(sign)
            x = bits.view(np.float32)
            ref = reference(x.astype(np.float64))
            err = np.abs(fn(x).astype(np.float64) - ref) / ulp(ref)
            i = int(np.argmax(err))
            if err[i] > worst:
                worst, worst_x = float(err[i]), float(x[i])
    return worst, worst_x


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--targets", default=",".join(hetkern.available_cpu_targets()))
    p.add_argument("--step", type=int, default=1)
    args = p.parse_args()
    for target in args.targets.split(","):
        hetkern.set_cpu_target(target)
        for op in args.ops.split(","):
            t0 = time.time()
            worst, x = worst_error(op, args.step)
            print(f"{op} {target}: max {worst:.3f} ulp at x={x!r} (step {args.step}, {time.time() - t0:.0f} s)",
                  flush=True)


if __name__ == "__main__":
    main()
