"""Worst error of hetkern's float32 softmax and log_softmax against
docs/softmax.md's bound, per row kernel, as a fraction of the bound (1.0 =
at the bound; the tests fail above it). The tests only say pass or fail;
this says how much of the bound's constant a kernel change spends. The
rows, the reference and the bound are tests/test_softmax.py's.

    python benchmarks/softmax_accuracy.py [--device cuda]

Rows: randn * 4 (logits, rows_of), and rows spanning [max - 110, max]
evenly (spanning_rows: every term from 1 down to subnormal softmax
results). Prints one line per (op, shape, kind of rows): the worst
err / tol, and the worst err in eps beyond |x - max| (the bound's constant
spent: the bound is eps * (8 + |x - max|), times ref for softmax).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

import hetkern

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_softmax import KERNEL_SHAPES, reference, rows_of, spanning_rows, tolerance  # noqa: E402

# Each CUDA row kernel's launch shapes, and 64x32000 and 1x151936 (2-block
# clusters at two an SM; 16 blocks).
SHAPES = KERNEL_SHAPES + [(64, 32000), (1, 151936)]


def worst(y: torch.Tensor, x: torch.Tensor, log: bool) -> tuple[float, float]:
    ref = reference(x, log)
    xd = x.double().numpy()
    shift = np.abs(xd - xd.max(-1, keepdims=True))
    err = np.abs(y.double().numpy() - ref)
    tol = tolerance(x.dtype, ref, shift, log)
    eps = torch.finfo(x.dtype).eps
    if log:
        spent = err / eps - shift - np.abs(ref)
    else:
        normal = ref >= torch.finfo(x.dtype).smallest_normal
        spent = np.where(normal, err / (eps * np.where(normal, ref, 1)) - shift, -np.inf)
    return float((err / tol).max()), float(spent.max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    for name, op, log in [("softmax", hetkern.softmax, False), ("log_softmax", hetkern.log_softmax, True)]:
        for n, length in SHAPES:
            for kind in ("logits", "span110"):
                seed = n * length
                if kind == "logits":
                    x = rows_of(n, length, torch.float32, seed=seed)
                else:
                    x = spanning_rows(n, length, torch.float32, seed=seed)
                y = op(x.to(args.device)).cpu()
                ratio, spent = worst(y, x, log)
                print(f"{name:11s} float32 {f'{n}x{length}':10s} {kind:8s} worst err/tol {ratio:.3f}"
                      f"  constant spent {spent:.2f} eps (of 8)")


if __name__ == "__main__":
    main()
