"""Activations (relu, sigmoid, silu, gelu, tanh, exp) and the gated
activations of LLM MLPs (silu_and_mul, gelu_and_mul). Thin wrappers in the
style of ``scale``: Python checks the array types and allocates ``out`` with
the caller's library; libhetkern validates the rest and picks the device.
See docs/activation.md for the numerical contract."""

from __future__ import annotations

from . import _lib
from ._ops import _check_array, _new_array, _run, _unary_op


def _approximate(op: str, approximate) -> str:
    if not isinstance(approximate, str):
        raise TypeError(
            f"hetkern.{op}: 'approximate' must be a str ('none' or 'tanh'); got {type(approximate).__name__}"
        )
    return approximate  # the library rejects other strings with ValueError


def _call(op: str, fn, out, x, *extra):
    """fn(out, x, *extra) through `_run` (`extra` is already checked); out."""
    _run(op, fn, (out, x, *extra), ("!out", "x") + ("=",) * len(extra))
    return out


def _gated(op: str, fn, x, out, *extra):
    if out is None:
        shape = tuple(_check_array(op, "x", x).shape)
        # An odd or missing last dimension is left to the library's ValueError;
        # the allocated out just has to be of a harmless shape until then.
        ok = len(shape) >= 1 and shape[-1] % 2 == 0
        out = _new_array(op, x, shape[:-1] + (shape[-1] // 2,) if ok else (0,))
    return _call(op, fn, out, x, *extra)


relu = _unary_op("relu", """``max(x, 0)``, bit-exact to torch.relu (relu(NaN) = NaN, relu(-0) = -0).""")
sigmoid = _unary_op("sigmoid", """``1 / (1 + exp(-x))``, accurate also where it is tiny (x < -88).""")
silu = _unary_op("silu", """``x * sigmoid(x)`` (SiLU / swish), as torch.nn.functional.silu.""")
tanh = _unary_op("tanh", """Hyperbolic tangent, as torch.tanh.""")
exp = _unary_op(
    "exp", """``e ** x``, as torch.exp (overflows to inf, underflows through subnormals to 0)."""
)


def gelu(x, approximate: str = "none", out=None):
    """GELU as torch.nn.functional.gelu: ``x * Phi(x)`` for approximate='none'
    (the erf form), ``x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` for 'tanh'."""
    a = _approximate("gelu", approximate)
    if out is None:
        out = _new_array("gelu", x)
    return _call("gelu", _gelu, out, x, a)


def silu_and_mul(x, out=None):
    """``silu(x[..., :d]) * x[..., d:]`` for x of shape (..., 2d), computed in
    float32 (float64 for float64) and rounded once, as vLLM's kernel.
    ``out`` has shape (..., d) and must not overlap ``x``."""
    return _gated("silu_and_mul", _silu_and_mul, x, out)


def gelu_and_mul(x, approximate: str = "none", out=None):
    """``gelu(x[..., :d], approximate) * x[..., d:]`` for x of shape (..., 2d),
    computed in float32 (float64 for float64) and rounded once."""
    a = _approximate("gelu_and_mul", approximate)
    return _gated("gelu_and_mul", _gelu_and_mul, x, out, a)


_gelu = _lib.module.gelu
_silu_and_mul = _lib.module.silu_and_mul
_gelu_and_mul = _lib.module.gelu_and_mul
