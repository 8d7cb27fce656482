"""Reductions over the last axis or the whole array: sum, max, dot, norm.

Python checks what only it can (array types, `axis` type, read-only `out`),
allocates `out` (and, for long rows on CUDA, the partials scratch) with the
caller's own library, then makes one call into libhetkern.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import _lib
from ._ops import _check_array, _is_torch_tensor, _new_array, _run

# Mirrors kReduceCudaChunk (src/core/args.h): on CUDA, rows longer than this
# are reduced in chunks whose partials go to a float64 scratch array; the
# library checks the size it is given.
_CUDA_CHUNK = 8192
_DL_CUDA = 2


def _axis(op: str, axis):
    if axis is None:
        return None
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"hetkern.{op}: 'axis' must be an int or None; got {type(axis).__name__}")
    try:
        return operator.index(axis)
    except TypeError:
        raise TypeError(
            f"hetkern.{op}: 'axis' must be an int or None; got {type(axis).__name__}"
        ) from None


def _scratch(op: str, x, shape, axis):
    """The float64 partials buffer the CUDA kernels need for rows longer than
    one chunk, allocated with x's library on x's device; None elsewhere, and
    None where TVM-FFI hands the library the caller's own allocator (torch,
    through its DLPack C exchange API): the library then allocates it."""
    if type(x) is np.ndarray:
        return None
    if _is_torch_tensor(x):  # torch's __dlpack_device__ costs microseconds
        if not x.is_cuda or hasattr(type(x), "__dlpack_c_exchange_api__"):
            return None
    elif int(x.__dlpack_device__()[0]) != _DL_CUDA:
        return None
    numel = math.prod(shape)
    cols = numel if axis is None or len(shape) == 0 else shape[-1]
    if cols <= _CUDA_CHUNK:
        return None
    rows = numel // cols
    if _is_torch_tensor(x):
        import torch

        dtype = torch.float64
    else:
        dtype = x.__array_namespace__().float64 if hasattr(x, "__array_namespace__") else np.float64
    return _new_array(op, x, (rows * -(-cols // _CUDA_CHUNK),), dtype)


def _reduce(op: str, fn, x, y, axis, out):
    axis = _axis(op, axis)
    if not hasattr(x, "shape"):
        _check_array(op, "x", x)  # TypeError naming 'x'
    shape = tuple(x.shape)
    if out is None:
        out = _new_array(op, x, () if axis is None else shape[:-1])
    scratch = _scratch(op, x, shape, axis)
    if y is None:
        _run(op, fn, (out, x, axis, scratch), ("!out", "x", "=axis", "?scratch"))
    else:
        _run(op, fn, (out, x, y, axis, scratch), ("!out", "x", "y", "=axis", "?scratch"))
    return out


def sum(x, axis=-1, out=None):  # noqa: A001 (hetkern.sum, like numpy.sum)
    """Sum over the last axis (``axis=-1``) or the whole array (``axis=None``).

    The result has x's dtype; float16/bfloat16 accumulate in float32. Empty
    rows sum to 0. The summation order is fixed (docs/reduce.md), so results
    do not depend on the thread count or the CPU's SIMD target.
    """
    return _reduce("sum", _sum, x, None, axis, out)


def max(x, axis=-1, out=None):  # noqa: A001
    """Largest element over the last axis or the whole array; NaN if any
    element is NaN (like ``torch.amax``). ValueError for empty rows."""
    return _reduce("max", _max, x, None, axis, out)


def dot(x, y, axis=-1, out=None):
    """``(x * y).sum(axis)``; y has x's shape, dtype and device."""
    if y is None:
        raise TypeError("hetkern.dot: 'y' must be an array (numpy.ndarray, torch.Tensor or "
                        "another DLPack-exporting array); got NoneType")
    return _reduce("dot", _dot, x, y, axis, out)


def norm(x, axis=-1, out=None):
    """L2 norm ``sqrt(sum(x * x))`` over the last axis or the whole array.

    Squares are accumulated in float64 for every dtype, so float32 input
    neither overflows nor underflows in the squares.
    """
    return _reduce("norm", _norm, x, None, axis, out)


_sum = _lib.module.sum
_max = _lib.module.max
_dot = _lib.module.dot
_norm = _lib.module.norm
