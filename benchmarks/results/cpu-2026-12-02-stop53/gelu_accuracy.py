"""float32 erf-GELU: hetkern against torch's CPU kernel, error in ulp of the
float32-rounded exact value x * erfc(-x / sqrt 2) / 2 (math.erfc, float64),
over 2^20 points of [-10, 10]. torch's float64 gelu is no reference here: its
0.5 x (1 + erf(x / sqrt 2)) cancels in the negative tail (x = -8: 2 % off)."""
import math

import numpy as np
import torch

import hetkern

xs = np.linspace(-10, 10, 1 << 20, dtype=np.float32)
exact = np.array([float(v) * 0.5 * math.erfc(-float(v) / math.sqrt(2)) for v in xs])
ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
for name, got in [("hetkern", hetkern.gelu(torch.from_numpy(xs))),
                  ("torch", torch.nn.functional.gelu(torch.from_numpy(xs)))]:
    err = np.abs(got.double().numpy() - exact) / ulp
    worst = int(err.argmax())
    print(f"{name:8s} max {err.max():.4g} ulp at x = {xs[worst]:.6g} "
          f"(got {float(got[worst]):.6e}, exact {exact[worst]:.6e})")
for v in (-3.0, -4.0, -5.0, -6.0):
    e = v * 0.5 * math.erfc(-v / math.sqrt(2))
    t = torch.nn.functional.gelu(torch.tensor([v]))[0].item()
    h = hetkern.gelu(torch.tensor([v]))[0].item()
    print(f"x = {v}: exact {e:.6e}, torch {t:.6e} (relative error {abs(t - e) / abs(e):.1e}), "
          f"hetkern {h:.6e} ({abs(h - e) / abs(e):.1e})")
print("torch", torch.__version__, "hetkern target", hetkern.cpu_target())
