"""What a benchmark case is, and the helpers the family modules build them with.

A family module (elementwise.py, activation.py, ...) has FAMILY and a
``cases(device, dtypes, max_elems, quick)`` returning `Case`s. A case names
the op, dtype and shape, the bytes it must move at least (read + written),
and a ``setup(device)`` that allocates the arrays and returns the contenders
as zero-argument callables working on them:

    "hetkern"  the hetkern call (always)
    "numpy"    NumPy with out= where it has one (CPU only; absent: no peer)
    "torch"    torch eager, with out= where torch has it
    "compile"  the functional torch form that the runner hands to
               torch.compile (GPU, where triton imports)

A key that is missing means that peer has no such op (or dtype).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .harness import size_label, sizes_up_to

Contenders = dict[str, Callable[[], object]]

# Tokens x hidden shapes of LLM row ops (tokens 1..16384, hidden 1024..16384),
# smallest first; tokens <= 128 are the decode shapes.
LLM_SHAPES = [(1, 4096), (8, 4096), (32, 4096), (128, 4096), (1024, 4096), (2048, 1024),
              (256, 16384), (4096, 4096), (16384, 1024), (4096, 8192), (16384, 4096),
              (4096, 16384), (16384, 16384)]
QUICK_LLM_SHAPES = [(1, 4096), (32, 1024), (128, 4096)]
DECODE_TOKENS = 128
# Families whose rows are tokens: up to DECODE_TOKENS of them is a decode step
# (softmax rows are attention or logit rows, not tokens).
DECODE_FAMILIES = ("activation", "norm", "rope")


def is_decode(family: str, tokens: int | None) -> bool:
    return tokens is not None and family in DECODE_FAMILIES and tokens <= DECODE_TOKENS


@dataclass
class Case:
    family: str
    op: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    setup: Callable[[str], Contenders]
    rows: bool = False  # a row op: prod(shape[:-1]) is the token (row) count

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def tokens(self) -> int | None:
        return math.prod(self.shape[:-1]) if self.rows else None

    @property
    def decode(self) -> bool:
        return is_decode(self.family, self.tokens)

    @property
    def label(self) -> str:
        return "x".join(map(str, self.shape)) if self.rows else size_label(self.size)


def flat_sizes(max_elems: int, quick: bool, first: int = 1 << 10) -> list[int]:
    """1K, 4K, ... up to max_elems; --quick: 1K, 64K, 1M (within max_elems)."""
    if quick:
        return [n for n in (first, first * 64, first * 1024) if n <= max_elems]
    return sizes_up_to(max_elems, first)


def llm_shapes(max_elems: int, quick: bool) -> list[tuple[int, int]]:
    """LLM_SHAPES (or the quick ones) whose element count fits max_elems."""
    return [s for s in (QUICK_LLM_SHAPES if quick else LLM_SHAPES) if s[0] * s[1] <= max_elems]


def torch_dtype(name: str):
    import torch

    return getattr(torch, name)


def element_size(name: str) -> int:
    return {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}[name]


def randn(shape, dtype: str, device: str, scale: float = 1.0, shift: float = 0.0, seed: int = 0):
    """Normal random values (generated in float32, then cast) on `device`."""
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    t = torch.randn(shape, generator=g, device=device, dtype=torch.float32)
    if scale != 1.0:
        t.mul_(scale)
    if shift:
        t.add_(shift)
    return t.to(torch_dtype(dtype))


def has_numpy(t) -> bool:
    """A CPU tensor whose dtype NumPy has (not bfloat16)."""
    import torch

    return t.device.type == "cpu" and t.dtype != torch.bfloat16


def native(t):
    """What a user hands hetkern: a NumPy view of a CPU tensor NumPy can hold,
    else the tensor. hetkern thus runs on NumPy arrays when NumPy is a peer,
    so small-call overheads compare like for like."""
    return t.numpy() if has_numpy(t) else t


def numpy_peer(fn: Callable[[], object], *tensors) -> dict:
    """{"numpy": fn} when every tensor is NumPy-representable, else {}."""
    return {"numpy": fn} if all(has_numpy(t) for t in tensors) else {}
