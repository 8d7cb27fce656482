"""Normalisation over the last dimension: rmsnorm, fused_add_rmsnorm, layernorm.

Thin wrappers in the manner of `scale`: allocate `out` with the caller's
library, then one call into libhetkern (the arguments go straight to it;
Python checks them one by one, `_checked_call`, only if TVM-FFI refuses one). libhetkern validates
shapes, dtypes, devices, overlap and `eps`, then runs on the arguments'
device (CUDA: the caller's stream).
"""

from __future__ import annotations

from . import _lib
from ._ops import _checked_call, _new_array


def rmsnorm(x, weight, eps=1e-6, out=None):
    """Return ``x / sqrt(mean(x**2, -1) + eps) * weight`` over the last dimension.

    Semantics of vLLM's ``rms_norm``: the mean of squares is accumulated in
    float32 (float64 for float64 input) and the normalised value is rounded
    to x's dtype before the multiply by ``weight`` (shape ``(H,)``, x's
    dtype). ``out`` may be ``x``.
    """
    if out is None:
        out = _new_array("rmsnorm", x)
    try:
        _rmsnorm(out, x, weight, eps)
        return out
    except (TypeError, BufferError):
        pass
    _checked_call("rmsnorm", _rmsnorm, (out, x, weight, eps), ("!out", "x", "weight", "#eps"))
    return out


def fused_add_rmsnorm(x, residual, weight, eps=1e-6):
    """In place, as vLLM's ``fused_add_rms_norm``: ``residual = x + residual``
    (rounded to the dtype), then ``x = rmsnorm(residual, weight, eps)``.

    ``x`` and ``residual`` have the same shape, dtype and device and must not
    overlap. Returns ``(x, residual)``, the objects passed in.
    """
    try:
        _fused_add_rmsnorm(x, residual, weight, eps)
        return x, residual
    except (TypeError, BufferError):
        pass
    _checked_call("fused_add_rmsnorm", _fused_add_rmsnorm, (x, residual, weight, eps),
                  ("!x", "!residual", "weight", "#eps"))
    return x, residual


def layernorm(x, weight, bias=None, eps=1e-5, out=None):
    """Return ``(x - mean) / sqrt(var + eps) * weight + bias`` over the last
    dimension, like ``torch.nn.functional.layer_norm(x, (H,), weight, bias, eps)``.

    Mean and (biased) variance are computed in two passes in float32 (float64
    for float64 input); ``bias`` may be None. ``out`` may be ``x``.
    """
    if out is None:
        out = _new_array("layernorm", x)
    try:
        _layernorm(out, x, weight, bias, eps)
        return out
    except (TypeError, BufferError):
        pass
    _checked_call("layernorm", _layernorm, (out, x, weight, bias, eps),
                  ("!out", "x", "weight", "?bias", "#eps"))
    return out


_rmsnorm = _lib.module.rmsnorm
_fused_add_rmsnorm = _lib.module.fused_add_rmsnorm
_layernorm = _lib.module.layernorm
