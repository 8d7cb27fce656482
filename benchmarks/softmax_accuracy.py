"""Worst error of hetkern's float32 softmax and log_softmax against
docs/softmax.md's bound, per row kernel, as a fraction of the bound (1.0 =
at the bound; the tests fail above it). The tests only say pass or fail;
this says how much of the bound's constant a kernel change spends.
(float64's bound is against a long double reference: not done here.)

    python benchmarks/softmax_accuracy.py [--device cuda]

Rows: randn * 4 (logits), and rows spanning [max - 110, max] evenly (every
term from 1 down to subnormal softmax results). Prints one line per (op,
shape, kind of rows): the worst err / tol, and the worst err in eps beyond
|x - max| (the bound's constant spent: the bound is eps * (8 + |x - max|)).
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

import hetkern

# Each CUDA row kernel's launch shapes: tests/test_softmax.py's KERNEL_SHAPES,
# and 64x32000 and 1x151936 (2-block clusters at two an SM; 16 blocks).
SHAPES = [(37, 1000), (128, 32000), (1, 32000), (24, 32000), (48, 32000), (64, 32000), (2, 128256),
          (1, 151936), (300, 32000)]


def rows(kind: str, n: int, length: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if kind == "logits":
        return (torch.randn(n, length, generator=g, dtype=torch.float64) * 4).to(dtype)
    top = torch.rand(n, 1, generator=g, dtype=torch.float64) * 40 - 20
    depth = torch.rand(n, length, generator=g, dtype=torch.float64) * 110
    depth[torch.arange(n), torch.randint(length, (n,), generator=g)] = 0.0
    return (top - depth).to(dtype)


def worst(y: torch.Tensor, x: torch.Tensor, log: bool) -> tuple[float, float]:
    xd = x.double().numpy()
    shifted = xd - xd.max(-1, keepdims=True)
    e = np.exp(shifted)
    ref = shifted - np.log(e.sum(-1, keepdims=True)) if log else e / e.sum(-1, keepdims=True)
    eps = torch.finfo(x.dtype).eps
    err = np.abs(y.double().numpy() - ref)
    shift = np.abs(shifted)
    if log:
        tol = eps * (8 + shift + np.abs(ref))
        spent = err / eps - shift - np.abs(ref)
    else:
        tiny = torch.finfo(x.dtype).smallest_normal
        tol = eps * (8 + shift) * ref + tiny * eps * 4
        normal = ref >= tiny
        spent = np.where(normal, err / (eps * np.where(normal, ref, 1)) - shift, -np.inf)
    return float((err / tol).max()), float(spent.max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    dtype = torch.float32
    for name, op, log in [("softmax", hetkern.softmax, False), ("log_softmax", hetkern.log_softmax, True)]:
        for n, length in SHAPES:
            for kind in ("logits", "span110"):
                x = rows(kind, n, length, dtype, seed=n * length)
                y = op(x.to(args.device)).cpu()
                ratio, spent = worst(y, x, log)
                print(f"{name:11s} float32 {f'{n}x{length}':10s} {kind:8s} worst err/tol {ratio:.3f}"
                      f"  constant spent {spent:.2f} eps (of 8)")


if __name__ == "__main__":
    main()
