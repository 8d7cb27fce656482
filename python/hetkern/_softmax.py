"""softmax and log_softmax over the last dimension."""

from __future__ import annotations

from ._ops import _unary_op

softmax = _unary_op("softmax", """Return ``softmax(x)`` over the last dimension, on the device ``x`` lives on.

    Like ``torch.softmax(x, -1)``: ``exp(x - max) / sum(exp(x - max))`` per
    row, computed in float32 (float64 for float64 input) and rounded once to
    x's dtype. A row holding NaN or +inf, or only -inf, gives NaN; -inf
    entries of other rows get probability 0. ``out`` may be ``x`` (in place).
    """)

log_softmax = _unary_op("log_softmax", """Return ``log_softmax(x)`` = ``x - max - log(sum(exp(x - max)))`` over the
    last dimension, on the device ``x`` lives on.

    Like ``torch.log_softmax(x, -1)``; same precision, special values and
    ``out`` rules as :func:`softmax` (-inf entries stay -inf).
    """)
