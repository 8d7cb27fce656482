"""Elementwise ops: scale, add, add with a (1024,) row broadcast, mul by a
scalar, div, axpby, cast; plus scale's allocating form at 1K/4K (whole-call
time of small calls against NumPy)."""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

import hetkern

from .cases import Case, element_size, flat_sizes, has_numpy, native, numpy_peer, randn

FAMILY = "elementwise"
ROW = 1024  # row length of add_bcast: x is (n / ROW, ROW), y is (ROW,)
SMALL = (1 << 10, 1 << 12)  # scale_alloc sizes


def _xyo(n, dtype, device, out_dtype=None):
    x = randn(n, dtype, device, seed=1)
    y = randn(n, dtype, device, shift=2.0, seed=2)  # away from 0 for div
    o = torch.empty(n, dtype=getattr(torch, out_dtype or dtype), device=device)
    return x, y, o


# Functional forms for torch.compile: one function per op, so that each op has
# its own compile cache (see runner.compiled).
def _scale_fn(x):
    return x * 2.0


def _add_fn(x, y):
    return x + y


def _div_fn(x, y):
    return x / y


def _mul_fn(x):
    return x * 0.3


def _axpby_fn(x, y):
    return x * 0.5 + y * 2.0


_COMPILE = {"add": _add_fn, "div": _div_fn}
_CAST = {"bfloat16": lambda x: x.to(torch.bfloat16), "float16": lambda x: x.to(torch.float16)}


def _scale(n, dtype, device):
    x, _, o = _xyo(n, dtype, device)
    xh, oh = native(x), native(o)
    return {"hetkern": lambda: hetkern.scale(xh, 2.0, out=oh),
            **numpy_peer(lambda: np.multiply(xh, 2.0, out=oh), x),
            "torch": lambda: torch.mul(x, 2.0, out=o),
            "compile": (_scale_fn, (x,))}


def _scale_alloc(n, dtype, device):
    x, _, _ = _xyo(n, dtype, device)
    xh = native(x)
    return {"hetkern": lambda: hetkern.scale(xh, 2.0),
            **numpy_peer(lambda: np.multiply(xh, 2.0), x),
            "torch": lambda: torch.mul(x, 2.0)}


def _binary(name, n, dtype, device):
    x, y, o = _xyo(n, dtype, device)
    xh, yh, oh = native(x), native(y), native(o)
    ours, theirs = getattr(hetkern, name), getattr(np, {"add": "add", "div": "divide"}[name])
    eager = getattr(torch, name)
    return {"hetkern": lambda: ours(xh, yh, out=oh),
            **numpy_peer(lambda: theirs(xh, yh, out=oh), x),
            "torch": lambda: eager(x, y, out=o),
            "compile": (_COMPILE[name], (x, y))}


def _add_bcast(n, dtype, device):
    x, y, o = _xyo(n, dtype, device)
    x, y, o = x.view(-1, ROW), y[:ROW], o.view(-1, ROW)
    xh, yh, oh = native(x), native(y), native(o)
    return {"hetkern": lambda: hetkern.add(xh, yh, out=oh),
            **numpy_peer(lambda: np.add(xh, yh, out=oh), x),
            "torch": lambda: torch.add(x, y, out=o),
            "compile": (_add_fn, (x, y))}


def _mul_scalar(n, dtype, device):
    x, _, o = _xyo(n, dtype, device)
    xh, oh = native(x), native(o)
    factor = xh.dtype.type(0.3) if isinstance(xh, np.ndarray) else 0.3
    return {"hetkern": lambda: hetkern.mul(xh, 0.3, out=oh),
            **numpy_peer(lambda: np.multiply(xh, factor, out=oh), x),
            "torch": lambda: torch.mul(x, 0.3, out=o),
            "compile": (_mul_fn, (x,))}


def _axpby(n, dtype, device):
    x, y, o = _xyo(n, dtype, device)
    xh, yh, oh = native(x), native(y), native(o)
    a, b = (xh.dtype.type(0.5), xh.dtype.type(2.0)) if isinstance(xh, np.ndarray) else (0.5, 2.0)
    # Eager a*x + b*y allocates two temporaries; add(alpha=) would fuse one
    # product but rounds differently, so the exact expression is timed.
    return {"hetkern": lambda: hetkern.axpby(xh, yh, 0.5, 2.0, out=oh),
            **numpy_peer(lambda: np.add(np.multiply(xh, a), np.multiply(yh, b), out=oh), x),
            "torch": lambda: torch.add(torch.mul(x, 0.5), torch.mul(y, 2.0), out=o),
            "compile": (_axpby_fn, (x, y))}


def _cast(to, n, dtype, device):
    x, _, o = _xyo(n, dtype, device, out_dtype=to)
    # hetkern on NumPy arrays only when both ends are NumPy-representable.
    xh, oh = (native(x), native(o)) if has_numpy(o) else (x, o)
    return {"hetkern": lambda: hetkern.cast(xh, to, out=oh),
            **numpy_peer(lambda: np.copyto(oh, xh, casting="unsafe"), x, o),
            "torch": lambda: o.copy_(x),
            "compile": (_CAST[to], (x,))}


# op -> (setup(n, dtype, device), arrays read, out dtype or None (= input's), input dtypes or None (= all))
OPS = {
    "scale": (_scale, 1, None, None),
    "add": (partial(_binary, "add"), 2, None, None),
    "add_bcast": (_add_bcast, 1, None, None),
    "mul_scalar": (_mul_scalar, 1, None, None),
    "div": (partial(_binary, "div"), 2, None, None),
    "axpby": (_axpby, 2, None, None),
    "cast_bf16": (partial(_cast, "bfloat16"), 1, "bfloat16", ("float32",)),
    "cast_f16": (partial(_cast, "float16"), 1, "float16", ("float32",)),
}


def cases(device: str, dtypes: list[str], max_elems: int, quick: bool) -> list[Case]:
    out = []
    for op, (setup, reads, out_dtype, only) in OPS.items():
        for dtype in dtypes:
            if only and dtype not in only:
                continue
            nbytes_per = reads * element_size(dtype) + element_size(out_dtype or dtype)
            for n in flat_sizes(max_elems, quick):
                out.append(Case(FAMILY, op, dtype, (n,), n * nbytes_per, partial(setup, n, dtype)))
    if device == "cpu":  # whole-call time of small allocating calls
        for dtype in dtypes:
            for n in SMALL:
                if n <= max_elems:
                    out.append(Case(FAMILY, "scale_alloc", dtype, (n,), 2 * n * element_size(dtype),
                                    partial(_scale_alloc, n, dtype)))
    return out
