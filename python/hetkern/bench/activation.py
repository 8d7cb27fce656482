"""Activations (relu, sigmoid, silu, gelu, gelu_tanh, tanh, exp) over flat
sizes, and the gated ones (silu_and_mul, gelu_and_mul, gelu_tanh_and_mul) over
tokens x 2d inputs with the FFN widths d of LLMs."""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
import torch.nn.functional as F

import hetkern

from . import peers
from .cases import Case, element_size, flat_sizes, native, numpy_peer, randn

FAMILY = "activation"


def _gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


# op -> (hetkern(x, out), torch eager(x, o), torch functional(x), NumPy(x, o) or None).
# torch writes into o where it has an out= form; F.silu/F.gelu have none and allocate.
UNARY = {
# (The functional forms are distinct Python functions: one compile cache per op.)
    "relu": (hetkern.relu, lambda x, o: torch.clamp_min(x, 0, out=o), lambda x: F.relu(x), None),
    "sigmoid": (hetkern.sigmoid, lambda x, o: torch.sigmoid(x, out=o), lambda x: torch.sigmoid(x), None),
    "silu": (hetkern.silu, lambda x, o: F.silu(x), lambda x: F.silu(x), None),
    "gelu": (hetkern.gelu, lambda x, o: F.gelu(x), lambda x: F.gelu(x), None),
    "gelu_tanh": (lambda x, out: hetkern.gelu(x, "tanh", out=out), lambda x, o: _gelu_tanh(x),
                  lambda x: _gelu_tanh(x), None),
    "tanh": (hetkern.tanh, lambda x, o: torch.tanh(x, out=o), lambda x: torch.tanh(x),
             lambda x, o: np.tanh(x, out=o)),
    "exp": (hetkern.exp, lambda x, o: torch.exp(x, out=o), lambda x: torch.exp(x),
            lambda x, o: np.exp(x, out=o)),
}


def _split(fn):
    """vLLM's reference: fn(x[..., :d]) * x[..., d:] (allocates)."""
    def run(x):
        d = x.shape[-1] // 2
        return fn(x[..., :d]) * x[..., d:]
    return run


GATED = {
    "silu_and_mul": (hetkern.silu_and_mul, _split(F.silu)),
    "gelu_and_mul": (hetkern.gelu_and_mul, _split(F.gelu)),
    "gelu_tanh_and_mul": (lambda x, out: hetkern.gelu_and_mul(x, "tanh", out=out), _split(_gelu_tanh)),
}
# (tokens, d): x is (tokens, 2d), out (tokens, d).
GATED_SHAPES = [(t, d) for t in (1, 16, 128, 1024, 4096, 16384) for d in (4096, 11008, 14336)]
QUICK_GATED_SHAPES = [(1, 4096), (32, 1024)]


def _unary(op, n, dtype, device):
    ours, eager, functional, theirs = UNARY[op]
    x = randn(n, dtype, device, scale=3.0)
    o = torch.empty_like(x)
    xh, oh = native(x), native(o)
    return {"hetkern": lambda: ours(xh, out=oh),
            **(numpy_peer(lambda: theirs(xh, oh), x) if theirs else {}),
            "torch": lambda: eager(x, o),
            "compile": (functional, (x,))}


def _gated_peers(op, x, o, d) -> dict:
    """Liger takes the gate and up projections as two arrays (as the HF MLP
    produces them): contiguous copies, the same bytes moved; its GeGLU is the
    tanh form. FlashInfer: silu_and_mul in bfloat16."""
    found = {}
    liger, fi = peers.liger(), peers.flashinfer()
    liger_op = {"silu_and_mul": "liger_swiglu", "gelu_tanh_and_mul": "liger_geglu"}.get(op)
    if liger is not None and liger_op:
        a, b = x[:, :d].contiguous(), x[:, d:].contiguous()
        fn = getattr(liger, liger_op)
        found["liger"] = lambda: fn(a, b)
    if fi is not None and op == "silu_and_mul" and x.dtype == torch.bfloat16:
        found["flashinfer"] = lambda: fi.silu_and_mul(x, o)
    return found


def _gated(op, tokens, d, dtype, device):
    ours, theirs = GATED[op]
    x = randn((tokens, 2 * d), dtype, device, scale=3.0)
    o = torch.empty(tokens, d, dtype=x.dtype, device=device)
    return {"hetkern": lambda: ours(x, out=o), "torch": lambda: theirs(x), "compile": (theirs, (x,)),
            **(_gated_peers(op, x, o, d) if device == "cuda" else {})}


def cases(device: str, dtypes: list[str], max_elems: int, quick: bool) -> list[Case]:
    out = []
    for op in UNARY:
        for dtype in dtypes:
            for n in flat_sizes(max_elems, quick):
                out.append(Case(FAMILY, op, dtype, (n,), 2 * n * element_size(dtype),
                                partial(_unary, op, n, dtype)))
    shapes = QUICK_GATED_SHAPES if quick else GATED_SHAPES
    for op in GATED:
        for dtype in dtypes:
            for tokens, d in shapes:
                if tokens * 2 * d > max_elems:
                    continue
                # x (tokens, 2d) read, out (tokens, d) written
                out.append(Case(FAMILY, op, dtype, (tokens, 2 * d), 3 * tokens * d * element_size(dtype),
                                partial(_gated, op, tokens, d, dtype), rows=True))
    return out
