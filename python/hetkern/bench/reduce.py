"""Reductions sum, max, dot, norm: over the whole array (op name as is,
axis=None) and over rows of 1024 (``<op>_rows``, axis=-1)."""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

import hetkern

from .cases import Case, element_size, flat_sizes, native, numpy_peer, randn

FAMILY = "reduce"
ROW = 1024

# op -> (torch eager with out= (x, y, o, rows), torch functional (x, y, rows),
#        NumPy (x, y, o, rows): out= except np.linalg.norm, which has none)
OPS = {
    "sum": (lambda x, y, o, rows: torch.sum(x, dim=-1 if rows else 0, out=o),
            lambda x, y, rows: torch.sum(x, dim=-1 if rows else 0),
            lambda x, y, o, rows: np.sum(x, axis=-1 if rows else None, out=o)),
    "max": (lambda x, y, o, rows: torch.amax(x, dim=-1 if rows else 0, out=o),
            lambda x, y, rows: torch.amax(x, dim=-1 if rows else 0),
            lambda x, y, o, rows: np.max(x, axis=-1 if rows else None, out=o)),
    "dot": (lambda x, y, o, rows: torch.linalg.vecdot(x, y, dim=-1, out=o) if rows else torch.dot(x, y, out=o),
            lambda x, y, rows: (x * y).sum(-1),
            lambda x, y, o, rows: np.einsum("ij,ij->i" if rows else "i,i->", x, y, out=o)),
    "norm": (lambda x, y, o, rows: torch.linalg.vector_norm(x, dim=-1, out=o),
             lambda x, y, rows: torch.linalg.vector_norm(x, dim=-1),
             lambda x, y, o, rows: np.linalg.norm(x, axis=-1)),
}


def _reduce(op, rows, n, dtype, device):
    eager, functional, theirs = OPS[op]
    shape = (n // ROW, ROW) if rows else (n,)
    x = randn(shape, dtype, device, seed=1)
    y = randn(shape, dtype, device, seed=2)
    o = torch.empty(shape[:-1] if rows else (), dtype=x.dtype, device=device)
    xh, yh, oh = native(x), native(y), native(o)
    ours = getattr(hetkern, op)
    axis = -1 if rows else None
    call = (lambda: ours(xh, yh, axis=axis, out=oh)) if op == "dot" else (lambda: ours(xh, axis=axis, out=oh))
    return {"hetkern": call,
            **numpy_peer(lambda: theirs(xh, yh, oh, rows), x),
            "torch": lambda: eager(x, y, o, rows),
            "compile": (functional, (x, y, rows))}


def cases(device: str, dtypes: list[str], max_elems: int, quick: bool) -> list[Case]:
    out = []
    for rows in (False, True):
        for op in OPS:
            reads = 2 if op == "dot" else 1
            for dtype in dtypes:
                for n in flat_sizes(max_elems, quick):
                    outputs = n // ROW if rows else 1
                    out.append(Case(FAMILY, f"{op}_rows" if rows else op, dtype, (n,),
                                    (reads * n + outputs) * element_size(dtype),
                                    partial(_reduce, op, rows, n, dtype)))
    return out
