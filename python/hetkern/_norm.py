"""Normalisation over the last dimension: rmsnorm, fused_add_rmsnorm, layernorm.

Thin wrappers in the manner of `scale`: Python checks what only it can (array
types, read-only arrays, Python number types) and allocates `out` with the
caller's library; libhetkern validates shapes, dtypes, devices, overlap and
`eps`, then runs on the arguments' device (CUDA: the caller's stream).
"""

from __future__ import annotations

import numpy as np

from . import _lib
from ._ops import _check_array, _output, _scalar


def _check_writable(op: str, name: str, a) -> None:
    if type(a) is np.ndarray and not a.flags.writeable:
        raise ValueError(f"hetkern.{op}: '{name}' is read-only; expected a writable array")


def rmsnorm(x, weight, eps=1e-6, out=None):
    """Return ``x / sqrt(mean(x**2, -1) + eps) * weight`` over the last dimension.

    Semantics of vLLM's ``rms_norm``: the mean of squares is accumulated in
    float32 (float64 for float64 input) and the normalised value is rounded
    to x's dtype before the multiply by ``weight`` (shape ``(H,)``, x's
    dtype). ``out`` may be ``x``.
    """
    xa = _check_array("rmsnorm", "x", x)
    wa = _check_array("rmsnorm", "weight", weight)
    e = _scalar("rmsnorm", "eps", eps)
    out = _output("rmsnorm", x, out)
    _rmsnorm(out, xa, wa, e)
    return out


def fused_add_rmsnorm(x, residual, weight, eps=1e-6):
    """In place, as vLLM's ``fused_add_rms_norm``: ``residual = x + residual``
    (rounded to the dtype), then ``x = rmsnorm(residual, weight, eps)``.

    ``x`` and ``residual`` have the same shape, dtype and device and must not
    overlap. Returns ``(x, residual)``, the objects passed in.
    """
    op = "fused_add_rmsnorm"
    xa = _check_array(op, "x", x)
    ra = _check_array(op, "residual", residual)
    wa = _check_array(op, "weight", weight)
    e = _scalar(op, "eps", eps)
    _check_writable(op, "x", x)
    _check_writable(op, "residual", residual)
    _fused_add_rmsnorm(xa, ra, wa, e)
    return x, residual


def layernorm(x, weight, bias=None, eps=1e-5, out=None):
    """Return ``(x - mean) / sqrt(var + eps) * weight + bias`` over the last
    dimension, like ``torch.nn.functional.layer_norm(x, (H,), weight, bias, eps)``.

    Mean and (biased) variance are computed in two passes in float32 (float64
    for float64 input); ``bias`` may be None. ``out`` may be ``x``.
    """
    xa = _check_array("layernorm", "x", x)
    wa = _check_array("layernorm", "weight", weight)
    ba = None if bias is None else _check_array("layernorm", "bias", bias)
    e = _scalar("layernorm", "eps", eps)
    out = _output("layernorm", x, out)
    _layernorm(out, xa, wa, ba, e)
    return out


_rmsnorm = _lib.module.rmsnorm
_fused_add_rmsnorm = _lib.module.fused_add_rmsnorm
_layernorm = _lib.module.layernorm
