"""rope (in place) against the torch reference, vLLM's forward_native (which
returns new tensors), at LLM shapes: 32 query heads, 8 kv heads, head size
128, full rotary, NeoX layout. The case's shape is tokens x (40 * 128), the
query and key features of a token. Bytes: query and key read and written,
plus the cos/sin rows and positions read."""

from __future__ import annotations

from functools import partial

import torch

import hetkern

from . import peers
from .cases import Case, element_size

FAMILY = "rope"
NUM_HEADS, NUM_KV_HEADS, HEAD_SIZE, MAX_POSITION = 32, 8, 128, 16384
FEATURES = (NUM_HEADS + NUM_KV_HEADS) * HEAD_SIZE
TOKENS = (1, 16, 128, 1024, 4096, 8192, 16384)
QUICK_TOKENS = (1, 16)


def forward_native(positions, query, key, head_size, cos_sin_cache, is_neox):
    """vLLM's RotaryEmbedding.forward_native (in the query's dtype)."""
    positions = positions.flatten()
    num_tokens = positions.shape[0]
    cos, sin = cos_sin_cache.index_select(0, positions).chunk(2, dim=-1)
    rot_dim = cos_sin_cache.shape[1]

    def apply(x):
        shape = x.shape
        x = x.view(num_tokens, -1, head_size)
        x_rot, x_pass = x[..., :rot_dim], x[..., rot_dim:]
        c, s = cos.unsqueeze(-2).to(x.dtype), sin.unsqueeze(-2).to(x.dtype)
        if is_neox:
            x1, x2 = torch.chunk(x_rot, 2, dim=-1)
        else:
            x1, x2 = x_rot[..., ::2], x_rot[..., 1::2]
        o1, o2 = x1 * c - x2 * s, x2 * c + x1 * s
        rotated = torch.cat((o1, o2), -1) if is_neox else torch.stack((o1, o2), -1).flatten(-2)
        return torch.cat((rotated, x_pass), dim=-1).reshape(shape)

    return apply(query), apply(key)


def _rope(tokens, dtype, device):
    g = torch.Generator().manual_seed(tokens)
    positions = torch.randint(0, MAX_POSITION, (tokens,), generator=g)
    query = torch.randn(tokens, NUM_HEADS * HEAD_SIZE, generator=g).to(getattr(torch, dtype))
    key = torch.randn(tokens, NUM_KV_HEADS * HEAD_SIZE, generator=g).to(getattr(torch, dtype))
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HEAD_SIZE, 2, dtype=torch.float) / HEAD_SIZE))
    freqs = torch.outer(torch.arange(MAX_POSITION, dtype=torch.float), inv_freq)
    cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(getattr(torch, dtype))
    positions, query, key, cache = (t.to(device) for t in (positions, query, key, cache))
    args = (positions, query, key, HEAD_SIZE, cache, True)
    return {"hetkern": lambda: hetkern.rope(*args), "torch": lambda: forward_native(*args),
            "compile": (forward_native, args),
            **(_gpu_peers(positions, query, key, cache) if device == "cuda" else {})}


def _gpu_peers(positions, query, key, cache) -> dict:
    """Liger: the HF layout, (1, heads, tokens, head_size) views of the
    (tokens, heads * head_size) projections as HF's attention makes them, and
    full-width cos/sin rows of the positions, gathered here (untimed: HF's
    rotary module computes them once per step). FlashInfer (bfloat16): a
    float32 cache, into separate outputs (its kernel is not safe in place)."""
    found = {}
    liger, fi = peers.liger(), peers.flashinfer()
    tokens = query.shape[0]
    if liger is not None:
        q4 = query.view(1, tokens, NUM_HEADS, HEAD_SIZE).transpose(1, 2)
        k4 = key.view(1, tokens, NUM_KV_HEADS, HEAD_SIZE).transpose(1, 2)
        cos, sin = cache.index_select(0, positions).chunk(2, dim=-1)
        cos, sin = torch.cat((cos, cos), -1).unsqueeze(0), torch.cat((sin, sin), -1).unsqueeze(0)
        found["liger"] = lambda: liger.liger_rope(q4, k4, cos, sin)
    if fi is not None and query.dtype == torch.bfloat16:
        cache32, q_out, k_out = cache.float(), torch.empty_like(query), torch.empty_like(key)
        found["flashinfer"] = lambda: fi.rope(positions, query, key, q_out, k_out, HEAD_SIZE, cache32, True)
    return found


def _bytes(tokens, dtype):
    es = element_size(dtype)
    return 2 * tokens * FEATURES * es + tokens * HEAD_SIZE * es + tokens * 8


def cases(device: str, dtypes: list[str], max_elems: int, quick: bool) -> list[Case]:
    return [Case(FAMILY, "rope", dtype, (t, FEATURES), _bytes(t, dtype), partial(_rope, t, dtype), rows=True)
            for dtype in dtypes
            for t in (QUICK_TOKENS if quick else TOKENS) if t * FEATURES <= max_elems]
