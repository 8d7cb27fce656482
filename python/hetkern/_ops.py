"""The Python face of every op: argument checks that only Python can do
(array type, writability, allocating `out` with the caller's own library),
then one call into libhetkern, which validates the rest and picks the device.
"""

from __future__ import annotations

import sys

import numpy as np

from tvm_ffi import from_dlpack as _from_dlpack

from . import _lib

_ndarray = np.ndarray


def _is_torch_tensor(a) -> bool:
    # torch is never imported here: a caller holding a tensor has imported it.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(a, torch.Tensor)


def _check_array(op: str, name: str, a):
    """`a` as libhetkern accepts it; TypeError for anything but an array."""
    if type(a) is _ndarray:
        # NumPy exports read-only arrays only through versioned DLPack.
        return a if a.flags.writeable else _from_dlpack(a.__dlpack__(max_version=(1, 0)))
    if hasattr(a, "__dlpack__"):
        return a
    raise TypeError(
        f"hetkern.{op}: '{name}' must be an array (numpy.ndarray, torch.Tensor or another "
        f"DLPack-exporting array); got {type(a).__name__}"
    )


def _new_array(op: str, like, shape=None, dtype=None):
    """A new contiguous array of `like`'s library and device; `shape` and
    `dtype` (in that library's own dtype type) default to `like`'s."""
    shape = like.shape if shape is None else tuple(shape)
    if type(like) is _ndarray:
        return np.empty(shape, like.dtype if dtype is None else dtype)
    if _is_torch_tensor(like):
        return like.new_empty(shape, dtype=dtype)
    if hasattr(like, "__array_namespace__"):
        xp = like.__array_namespace__()
        return xp.empty(shape, dtype=like.dtype if dtype is None else dtype, device=like.device)
    raise TypeError(f"hetkern.{op}: pass out= for arrays of type {type(like).__name__}")


def _output(op: str, x, out, shape=None, dtype=None):
    """The array to write into: `out` after checking it, or a new one like `x`
    (with `shape`/`dtype` where given). Shape and dtype of a given `out` are
    checked by the library."""
    if out is None:
        return _new_array(op, x, shape, dtype)
    if type(out) is _ndarray and not out.flags.writeable:
        raise ValueError(f"hetkern.{op}: 'out' is read-only; expected a writable array")
    _check_array(op, "out", out)
    return out


def _scalar(op: str, name: str, value) -> float:
    """A real Python/NumPy number (or 0-d array) as float; TypeError otherwise.
    Strings are refused even where float() would parse them."""
    if type(value) is float:
        return value
    if hasattr(value, "__float__") and not isinstance(value, (complex, np.complexfloating)):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"hetkern.{op}: '{name}' must be a real number; got {type(value).__name__}")


def scale(x, factor, out=None):
    """Return ``x * factor``, computed on the device ``x`` lives on.

    float16/bfloat16 are computed in float32 and rounded to nearest even, so
    results equal torch's ``x * factor`` bit for bit. ``out`` may be ``x``.
    """
    xa = _check_array("scale", "x", x)
    f = _scalar("scale", "factor", factor)
    out = _output("scale", x, out)
    _scale(out, xa, f)
    return out


_scale = _lib.module.scale
