"""softmax and log_softmax over the last axis: LLM attention/logit rows
(128 .. 32000 columns) and a few very long rows. Bytes: x read + out written
once (the minimum; a multi-pass kernel moves more). The NumPy peer is the
reference formula (NumPy has no softmax), with out= for the last step."""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

import hetkern

from . import peers
from .cases import Case, element_size, native, numpy_peer, randn

FAMILY = "softmax"
SHAPES = [(4096, 64), (65536, 128), (1024, 1024), (64, 32000), (1, 1 << 20), (16384, 1024),
          (4096, 4096), (4, 1 << 22), (4096, 32000), (16384, 4096), (16384, 16384)]
# LLM vocabularies (Llama 2, Llama 3, Qwen 2): logits rows, 1 (decode) to 4096.
VOCAB_SHAPES = [(rows, vocab) for vocab in (32000, 128256, 151936) for rows in (1, 32, 256, 4096)]
QUICK_SHAPES = [(64, 1024), (1, 1 << 16)]


def _numpy_softmax(x, out, log):
    shifted = x - x.max(axis=-1, keepdims=True)
    if log:
        np.subtract(shifted, np.log(np.exp(shifted).sum(axis=-1, keepdims=True)), out=out)
    else:
        e = np.exp(shifted)
        np.divide(e, e.sum(axis=-1, keepdims=True), out=out)


# op -> (hetkern, torch eager with out=, functional for torch.compile, log?)
OPS = {
    "softmax": (hetkern.softmax, lambda x, o: torch.softmax(x, -1, out=o), lambda x: torch.softmax(x, -1), False),
    "log_softmax": (hetkern.log_softmax, lambda x, o: torch.log_softmax(x, -1, out=o),
                    lambda x: torch.log_softmax(x, -1), True),
}


def _softmax(op, shape, dtype, device):
    ours, eager, functional, log = OPS[op]
    x = randn(shape, dtype, device, scale=4.0)
    o = torch.empty_like(x)
    xh, oh = native(x), native(o)
    liger = peers.liger() if device == "cuda" and not log else None
    return {"hetkern": lambda: ours(xh, out=oh),
            **numpy_peer(lambda: _numpy_softmax(xh, oh, log), x),
            "torch": lambda: eager(x, o),
            "compile": (functional, (x,)),
            # Liger's softmax (no log form) refuses rows longer than 65536.
            **({"liger": lambda: liger.liger_softmax(x)} if liger and shape[-1] <= 65536 else {})}


def cases(device: str, dtypes: list[str], max_elems: int, quick: bool) -> list[Case]:
    shapes = QUICK_SHAPES if quick else SHAPES
    if device == "cuda" and not quick:  # the vocabulary rows, on the GPU only (CPU sweeps stay short)
        shapes = shapes + [s for s in VOCAB_SHAPES if s not in shapes]
    return [Case(FAMILY, op, dtype, shape, 2 * shape[0] * shape[1] * element_size(dtype),
                 partial(_softmax, op, shape, dtype), rows=True)
            for op in OPS
            for dtype in dtypes
            for shape in shapes if shape[0] * shape[1] <= max_elems]
