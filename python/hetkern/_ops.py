"""The Python face of every op: allocate `out` with the caller's own library
when it is not given, then one call into libhetkern, which validates the
arguments and picks the device.

Per-call Python work is kept to that (issue: small-array calls must cost no
more than NumPy's): the caller's objects go straight to TVM-FFI. Only when
TVM-FFI cannot convert an argument (not an array, not a number, a read-only
NumPy array, which NumPy exports only through versioned DLPack) are the
arguments checked one by one (`_checked_call`), raising a precise error or
converting what needs converting, and the call repeated.

The wrappers of the small, hot ops spell that out inline,

    try:
        fn(out, x, ...)
        return out
    except (TypeError, BufferError):
        pass
    _checked_call(op, fn, (out, x, ...), names)

rather than calling `_run`: one Python frame and one tuple less is ~50 ns a
call (docs/performance.md, "Call overhead"). The retry sits after the
`except` so that its error is not chained to TVM-FFI's.
"""

from __future__ import annotations

import sys

import numpy as np

from tvm_ffi import from_dlpack as _from_dlpack

from . import _lib

_ndarray = np.ndarray
_empty_like = np.empty_like


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
    if type(like) is _ndarray:
        if shape is None and dtype is None:
            return _empty_like(like)  # the cheapest allocation NumPy has
        return np.empty(like.shape if shape is None else tuple(shape),
                        like.dtype if dtype is None else dtype)
    if _is_torch_tensor(like):
        # torch's argument parser takes ~1 us longer for a size given as a
        # torch.Size or tuple than for empty_like or separate ints. empty_like
        # keeps x's strides: the same layout as x, which the library requires
        # to be contiguous (and checks before `out`).
        if shape is None:
            torch = sys.modules["torch"]
            return torch.empty_like(like) if dtype is None else torch.empty_like(like, dtype=dtype)
        shape = tuple(shape)
        if not shape:
            return like.new_empty((), dtype=dtype)
        return like.new_empty(*shape) if dtype is None else like.new_empty(*shape, dtype=dtype)
    shape = like.shape if shape is None else tuple(shape)
    if hasattr(like, "__array_namespace__"):
        xp = like.__array_namespace__()
        return xp.empty(shape, dtype=like.dtype if dtype is None else dtype, device=like.device)
    _check_array(op, "x", like)  # TypeError for non-arrays
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


def _prepare(op: str, name: str, value):
    """One argument of `_run`'s slow path. Names: "x" an array, "?x" an array
    or None, "!x" an array the op writes (must be writable), "#x" a number,
    "~x" an array or a number, "=x" passed through as it is (already checked
    by the wrapper)."""
    kind = name[0] if name[0] in "?!#~=" else ""
    name = name.lstrip("?!#~=")
    if kind == "=":
        return value
    if kind == "~":
        if type(value) is _ndarray or hasattr(value, "__dlpack__"):
            return _check_array(op, name, value)
        try:
            return _scalar(op, name, value)
        except TypeError:
            raise TypeError(f"hetkern.{op}: '{name}' must be an array or a real number; "
                            f"got {type(value).__name__}") from None
    if kind == "#":
        return _scalar(op, name, value)
    if kind == "?" and value is None:
        return None
    if kind == "!" and type(value) is _ndarray and not value.flags.writeable:
        raise ValueError(f"hetkern.{op}: '{name}' is read-only; expected a writable array")
    return _check_array(op, name, value)


def _checked_call(op: str, fn, args: tuple, names: tuple):
    """fn(*args) with each argument checked first (see `_prepare`): the slow
    path, after TVM-FFI refused an argument as given."""
    return fn(*(_prepare(op, n, a) for n, a in zip(names, args)))


def _run(op: str, fn, args: tuple, names: tuple):
    """fn(*args), with the arguments checked (see `_prepare`) only if TVM-FFI
    refuses one of them as given."""
    try:
        return fn(*args)
    except (TypeError, BufferError):
        pass
    return _checked_call(op, fn, args, names)


def _unary_op(op: str, doc: str):
    """The wrapper `op(x, out=None)` of an export `op(out, x)` (the unary
    activations, softmax, log_softmax): the fast path above inline (a frame
    less than `_run`), one copy for all of them."""
    fn = getattr(_lib.module, op)

    def unary(x, out=None):
        if out is None:
            out = _new_array(op, x)
        try:
            fn(out, x)
            return out
        except (TypeError, BufferError):
            pass
        _checked_call(op, fn, (out, x), ("!out", "x"))
        return out

    unary.__name__ = unary.__qualname__ = op
    unary.__doc__ = doc
    return unary


def scale(x, factor, out=None):
    """Return ``x * factor``, computed on the device ``x`` lives on.

    float16/bfloat16 are computed in float32 and rounded to nearest even, so
    results equal torch's ``x * factor`` bit for bit. ``out`` may be ``x``.
    """
    if out is None:
        out = _new_array("scale", x)
    try:
        _scale(out, x, factor)
        return out
    except (TypeError, BufferError):
        pass
    _checked_call("scale", _scale, (out, x, factor), ("!out", "x", "#factor"))
    return out


_scale = _lib.module.scale
