"""Division or reciprocal? float32 activations with a division per value,
1 thread, 64K values (L2-resident), best of 5 x 1000 calls, ns per value.
Run in a fresh process per (library, target): python div_probe.py TARGET."""
import sys
import time

import numpy as np
import torch

import hetkern

torch.set_num_threads(1)
hetkern.set_num_threads(1)
hetkern.set_cpu_target(sys.argv[1])
n = 1 << 16
x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
out = np.empty_like(x)


def ns(f, reps=1000):
    f()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best / n * 1e9


ops = {"sigmoid": hetkern.sigmoid, "silu": hetkern.silu, "tanh": hetkern.tanh,
       "gelu": hetkern.gelu, "gelu_tanh": lambda v, out: hetkern.gelu(v, "tanh", out=out)}
print(sys.argv[2] if len(sys.argv) > 2 else "", hetkern.cpu_target(),
      " ".join(f"{k} {ns(lambda: f(x, out=out)):.3f}" for k, f in ops.items()), flush=True)
