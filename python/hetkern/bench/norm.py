"""rmsnorm, fused_add_rmsnorm (in place, vLLM semantics) and layernorm over
tokens x hidden LLM shapes. Bytes: x read and out written (the fused op: x
and residual read and written); weight and bias are not counted."""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F

import hetkern

from .cases import Case, element_size, llm_shapes, randn

FAMILY = "norm"


def _rms(x, w, r):
    return F.rms_norm(x, (x.shape[-1],), w, 1e-6)


def _fused(x, w, r):
    # The eager sequence vLLM's fused op replaces.
    r.add_(x)
    x.copy_(F.rms_norm(r, (x.shape[-1],), w, 1e-6))


def _ln(x, w, r):
    return F.layer_norm(x, (x.shape[-1],), w, w, 1e-5)


# op -> (hetkern(x, w, r, out), torch eager (x, w, r), arrays moved in units of x)
OPS = {
    "rmsnorm": (lambda x, w, r, out: hetkern.rmsnorm(x, w, 1e-6, out=out), _rms, 2),
    "fused_add_rmsnorm": (lambda x, w, r, out: hetkern.fused_add_rmsnorm(x, r, w, 1e-6), _fused, 4),
    "layernorm": (lambda x, w, r, out: hetkern.layernorm(x, w, w, 1e-5, out=out), _ln, 2),
}


def _norm(op, tokens, hidden, dtype, device):
    ours, theirs, _ = OPS[op]
    x = randn((tokens, hidden), dtype, device, seed=1)
    r = randn((tokens, hidden), dtype, device, seed=2)
    w = randn(hidden, dtype, device, seed=3)
    out = torch.empty_like(x)
    return {"hetkern": lambda: ours(x, w, r, out), "torch": lambda: theirs(x, w, r),
            "compile": (theirs, (x, w, r))}


def cases(device: str, dtypes: list[str], max_elems: int, quick: bool) -> list[Case]:
    return [Case(FAMILY, op, dtype, (tokens, hidden), moved * tokens * hidden * element_size(dtype),
                 partial(_norm, op, tokens, hidden, dtype), rows=True)
            for op, (_, _, moved) in OPS.items()
            for dtype in dtypes
            for tokens, hidden in llm_shapes(max_elems, quick)]
