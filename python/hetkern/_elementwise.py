"""Elementwise ops beyond scale: add/sub/mul/div, axpby and cast.

As everywhere in hetkern, Python checks only what the library cannot (array
type, read-only `out`, allocating `out` with the caller's library, the
meaning of a `dtype` argument); the library validates the rest and picks the
device.
"""

from __future__ import annotations

import sys

import numpy as np

from . import _lib
from ._ops import _check_array, _checked_call, _is_torch_tensor, _ndarray, _new_array, _output

_DTYPE_NAMES = ("float32", "float64", "float16", "bfloat16")


_BINARY_DOC = """Return ``x {sym} y`` elementwise, computed on the device ``x`` lives on.

    ``y`` is an array of ``x``'s dtype and device with ``x``'s shape, a trailing
    part of it (``(D,)`` for an ``(N, D)`` ``x``), shape ``(1,)`` or ``()``; or a
    real number, rounded to the compute type first. No type promotion: the
    result has ``x``'s shape and dtype. float16/bfloat16 are computed in float32
    and rounded once, so results equal torch's ``x {sym} y`` bit for bit.
    ``out`` may be ``x`` (or ``y`` when it has ``x``'s shape).{extra}
    """


def _binary_op(op: str, sym: str, extra: str = ""):
    """The wrapper of one binary op: the fast path of `_ops` inline (a frame
    less than a shared helper), one copy for add/sub/mul/div."""
    fn = getattr(_lib.module, op)
    names = ("!out", "x", "~y")

    def binary(x, y, out=None):
        if out is None:
            out = _new_array(op, x)
        try:
            fn(out, x, y)
            return out
        except (TypeError, BufferError):
            pass
        _checked_call(op, fn, (out, x, y), names)
        return out

    binary.__name__ = binary.__qualname__ = op
    binary.__doc__ = _BINARY_DOC.format(sym=sym, extra=extra)
    return binary


add = _binary_op("add", "+")
sub = _binary_op("sub", "-")
mul = _binary_op("mul", "*")
div = _binary_op(
    "div", "/",
    "\n\n    Division is IEEE division on both devices (torch's CUDA kernel multiplies by\n"
    "    the reciprocal of a Python-number divisor instead; hetkern does not).",
)


def axpby(x, y, a, b, out=None):
    """Return ``a*x + b*y`` elementwise, computed on the device ``x`` lives on.

    ``y`` as for :func:`add` (an array). Computed in the compute type as
    ``round(round(a*x) + round(b*y))`` without FMA: bit-equal to torch's
    ``a*x + b*y`` for float32/float64; for float16/bfloat16 the result is
    rounded once from float32 (torch rounds each intermediate to 16 bits).
    """
    if out is None:
        out = _new_array("axpby", x)
    try:
        _axpby(out, x, y, a, b)
        return out
    except (TypeError, BufferError):
        pass
    _checked_call("axpby", _axpby, (out, x, y, a, b), ("!out", "x", "y", "#a", "#b"))
    return out


def _dtype_name(dtype) -> str:
    """The hetkern name of a torch dtype, NumPy dtype/type or dtype string."""
    if isinstance(dtype, str):
        name = dtype
    else:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(dtype, torch.dtype):
            name = str(dtype).removeprefix("torch.")
        else:
            try:
                name = np.dtype(dtype).name
            except TypeError:
                raise TypeError(
                    "hetkern.cast: 'dtype' must be a torch.dtype, a NumPy dtype or a dtype name; "
                    f"got {type(dtype).__name__}"
                ) from None
    if name not in _DTYPE_NAMES:
        raise ValueError(f"hetkern.cast: 'dtype' is {name}; expected one of {', '.join(_DTYPE_NAMES)}")
    return name


def _library_dtype(like, name: str):
    """The dtype called `name` in the library of the array `like`."""
    if type(like) is _ndarray:
        if name == "bfloat16":
            raise TypeError("hetkern.cast: NumPy has no bfloat16; cast a torch tensor instead")
        return np.dtype(name)
    if _is_torch_tensor(like):
        return getattr(sys.modules["torch"], name)
    if hasattr(like, "__array_namespace__"):
        dtype = getattr(like.__array_namespace__(), name, None)
        if dtype is not None:
            return dtype
    raise TypeError(f"hetkern.cast: no {name} dtype known for arrays of type {type(like).__name__}")


def _array_dtype_name(a) -> str:
    dtype = a.dtype
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        return str(dtype).removeprefix("torch.")
    return getattr(dtype, "name", str(dtype))


def cast(x, dtype, out=None):
    """Return ``x`` converted to ``dtype`` (float32, float64, float16, bfloat16).

    ``dtype`` is a torch.dtype, a NumPy dtype/type or a name such as
    ``"bfloat16"``. Rounds to nearest even, bit-equal to torch's
    ``x.to(dtype)``; float64 -> float16/bfloat16 rounds through float32
    exactly as torch does (NumPy's ``astype`` rounds once, so it can differ in
    the last bit). The identity cast copies every bit. A new array is always
    returned unless ``out`` is given (``out=x`` is allowed for the identity).
    """
    xa = _check_array("cast", "x", x)
    name = _dtype_name(dtype)
    if out is None:
        out = _output("cast", x, None, dtype=_library_dtype(x, name))
    else:
        out = _output("cast", x, out)
        if _array_dtype_name(out) != name:
            raise ValueError(
                f"hetkern.cast: 'out' has dtype {_array_dtype_name(out)}; expected {name} (the 'dtype' argument)"
            )
    _cast(out, xa)
    return out


_axpby = _lib.module.axpby
_cast = _lib.module.cast
