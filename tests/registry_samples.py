"""Valid sample arguments for every op of the registry, built from the kinds
of its arguments (python/hetkern/_registry.py), so that tests parametrized
over the registry cover a new op without a hand-written case. Names that
need a particular array (rope's positions and cache, the 1-d weights) are
the only special cases."""

from __future__ import annotations

import torch

from hetkern._registry import (ARRAY, ARRAY_OR_NUMBER, AXIS, BOOL, DTYPE, INT, NUMBER,
                               OPTIONAL_ARRAY, REQUIRED, STR, Op)

ROWS, HIDDEN, HEAD = 4, 16, 8
MAX_POSITION = 12


def rope_cache(dtype=torch.float32, device="cpu"):
    inv = 1.0 / (10000.0 ** (torch.arange(0, HEAD, 2, dtype=torch.float64) / HEAD))
    freqs = torch.outer(torch.arange(MAX_POSITION, dtype=torch.float64), inv)
    return torch.cat((freqs.cos(), freqs.sin()), -1).to(dtype).to(device)


def _array(name: str, dtype, device, gen):
    def randn(*shape):
        return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype).to(device)

    if name == "positions":
        return torch.randint(0, MAX_POSITION, (ROWS,), generator=gen).to(device)
    if name == "cos_sin_cache":
        return rope_cache(dtype, device)
    if name == "query":
        return randn(ROWS, 2 * HEAD)
    if name == "key":
        return randn(ROWS, HEAD)
    if name in ("weight", "bias"):
        return randn(HIDDEN)
    if name == "scale":  # the quant norms': one float32
        return torch.tensor([0.25], device=device)
    if name == "out":  # the quant norms' written output: float8_e4m3fn bits as uint8,
        return torch.zeros(ROWS, HIDDEN, dtype=torch.uint8, device=device)  # which NumPy holds too
    return randn(ROWS, HIDDEN)


def _static(arg):
    if arg.default is not REQUIRED:
        return arg.default
    return {NUMBER: 0.5, INT: HEAD, BOOL: True, STR: "none", AXIS: -1, DTYPE: torch.float32}[arg.kind]


# The per-column parameters of the norms, which may have their own dtype.
PARAMS = ("weight", "bias")


def sample_args(op: Op, dtype=torch.float32, device="cpu", seed=0, param_dtype=None) -> dict:
    """name -> value for every argument of `op` (arrays as torch tensors);
    the PARAMS in `param_dtype` when given (float32 with 16-bit x)."""
    gen = torch.Generator().manual_seed(seed)
    values = {}
    for a in op.args:
        if a.kind in (ARRAY, OPTIONAL_ARRAY, ARRAY_OR_NUMBER):
            own = param_dtype if param_dtype is not None and a.name in PARAMS else dtype
            values[a.name] = _array(a.name, own, device, gen)
        else:
            values[a.name] = _static(a)
    return values


# What each bad value stands for in the typed-error tests.
NOT_ARRAYS = {
    "list": lambda: [1.0, 2.0],
    "tuple": lambda: (1.0, 2.0),
    "None": lambda: None,
    "str": lambda: "x",
    "dict": lambda: {"x": 1.0},
    "number": lambda: 2.0,
}


def bad_values_for(arg) -> list:
    """The NOT_ARRAYS that are wrong for `arg` (None is fine for an optional
    array, a number for an array-or-number)."""
    skip = {OPTIONAL_ARRAY: {"None"}, ARRAY_OR_NUMBER: {"number"}}.get(arg.kind, set())
    return [k for k in NOT_ARRAYS if k not in skip]
