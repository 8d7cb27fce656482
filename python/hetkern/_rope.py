"""Rotary position embedding (vLLM's ``rotary_embedding`` op), in place.

A thin wrapper in the manner of `scale`: the arguments go straight to
libhetkern, which validates them (positions, shapes, dtypes, devices,
overlaps) and runs on their device; Python checks them one by one only if
TVM-FFI refuses one.
"""

from __future__ import annotations

import numpy as np

from . import _lib
from ._ops import _prepare


def _checked(positions, query, key, head_size, cos_sin_cache, is_neox):
    """The slow path's arguments, in the library's order, each checked."""
    if isinstance(head_size, bool) or not isinstance(head_size, (int, np.integer)):
        raise TypeError(f"hetkern.rope: 'head_size' must be an int; got {type(head_size).__name__}")
    if not isinstance(is_neox, (bool, np.bool_)):
        raise TypeError(f"hetkern.rope: 'is_neox' must be a bool; got {type(is_neox).__name__}")
    return (_prepare("rope", "!query", query),
            None if key is None else _prepare("rope", "!key", key),
            _prepare("rope", "positions", positions),
            _prepare("rope", "cos_sin_cache", cos_sin_cache),
            int(head_size), bool(is_neox))


def rope(positions, query, key, head_size, cos_sin_cache, is_neox=True):
    """Apply rotary position embedding to ``query`` and ``key`` in place and
    return ``(query, key)``, as vLLM's ``rotary_embedding`` op does.

    - ``positions``: int64 or int32, shape ``(num_tokens,)`` or ``(batch, seq)``;
      each value is a row of ``cos_sin_cache``.
    - ``query``: shape ``(*positions.shape, num_heads * head_size)`` or
      ``(*positions.shape, num_heads, head_size)``; float32, float64, float16
      or bfloat16. ``key``: the same with its own head count, or None.
    - ``cos_sin_cache``: ``(max_position, rot_dim)``, cos in the first
      ``rot_dim // 2`` columns and sin in the rest; the dtype of ``query`` or
      float32. ``rot_dim`` is even and ``<= head_size``: only the first
      ``rot_dim`` features of each head rotate.
    - ``is_neox``: True rotates pairs ``(i, i + rot_dim // 2)`` (GPT-NeoX),
      False pairs ``(2i, 2i + 1)`` (GPT-J).

    float16/bfloat16 are computed in float32 and rounded once. On CPU a
    position outside ``[0, max_position)`` raises ValueError before anything
    is written; on CUDA (checking would need a host sync) such tokens are left
    unchanged. All arrays must be contiguous and on one device.
    """
    try:
        _rope(query, key, positions, cos_sin_cache, head_size, is_neox)
    except (TypeError, BufferError):
        # TVM-FFI refused an argument before calling in: check each one.
        _rope(*_checked(positions, query, key, head_size, cos_sin_cache, is_neox))
    return query, key


_rope = _lib.module.rope
