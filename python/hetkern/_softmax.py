"""softmax and log_softmax over the last dimension."""

from __future__ import annotations

from . import _lib
from ._ops import _checked_call, _new_array


def _row_op(op: str, fn, x, out):
    if out is None:
        out = _new_array(op, x)
    try:
        fn(out, x)
        return out
    except (TypeError, BufferError):
        pass
    _checked_call(op, fn, (out, x), ("!out", "x"))
    return out


def softmax(x, out=None):
    """Return ``softmax(x)`` over the last dimension, on the device ``x`` lives on.

    Like ``torch.softmax(x, -1)``: ``exp(x - max) / sum(exp(x - max))`` per
    row, computed in float32 (float64 for float64 input) and rounded once to
    x's dtype. A row holding NaN or +inf, or only -inf, gives NaN; -inf
    entries of other rows get probability 0. ``out`` may be ``x`` (in place).
    """
    return _row_op("softmax", _softmax, x, out)


def log_softmax(x, out=None):
    """Return ``log_softmax(x)`` = ``x - max - log(sum(exp(x - max)))`` over the
    last dimension, on the device ``x`` lives on.

    Like ``torch.log_softmax(x, -1)``; same precision, special values and
    ``out`` rules as :func:`softmax` (-inf entries stay -inf).
    """
    return _row_op("log_softmax", _log_softmax, x, out)


_softmax = _lib.module.softmax
_log_softmax = _lib.module.log_softmax
