"""rmsnorm, fused_add_rmsnorm (in place, vLLM semantics), their Gemma
variants (scale by 1 + weight) and layernorm over tokens x hidden LLM shapes,
and the fp8-quantising norms (*_quant: out is float8_e4m3fn, one byte an
element; torch's peer is the eager ``(norm(x) / scale).clamp(-448,
448).to(torch.float8_e4m3fn)``).
Bytes: x read and out written (the fused ops: x and residual read and
written; the fused quant op: x read, residual read and written, out
written); weight, bias and scale are not counted. Peers: Liger for the
plain and Gemma norms (Gemma: offset=1.0, casting_mode="gemma"); FlashInfer
for every op, bfloat16 only (rmsnorm, fused_add_rmsnorm and layernorm from
libfi_peer.so, the Gemma and quant norms from libfi_extra.so; FlashInfer's
quant kernels multiply by 1/scale where hetkern divides, so their bytes may
differ by a rounding)."""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F

import hetkern

from . import peers
from .cases import Case, element_size, llm_shapes, randn

FAMILY = "norm"


def _rms(x, w, r):
    return F.rms_norm(x, (x.shape[-1],), w, 1e-6)


def _fused(x, w, r):
    # The eager sequence vLLM's fused op replaces.
    r.add_(x)
    x.copy_(F.rms_norm(r, (x.shape[-1],), w, 1e-6))


def _gemma(x, w, r):
    # vLLM's GemmaRMSNorm.forward_static (torch has no Gemma norm).
    v = x.float()
    v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)
    return (v * (1.0 + w.float())).to(x.dtype)


def _gemma_fused(x, w, r):
    r.add_(x)
    x.copy_(_gemma(r, w, None))


def _ln(x, w, r):
    return F.layer_norm(x, (x.shape[-1],), w, w, 1e-5)


_SCALE = {}  # device -> the quant ops' float32 scale


def _scale(device):
    if device not in _SCALE:
        _SCALE[device] = torch.tensor([0.05], device=device)
    return _SCALE[device]


def _quantize(y):
    return (y / _scale(y.device.type)).clamp(-448, 448).to(torch.float8_e4m3fn)


def _fused_quant(x, w, r):
    r.add_(x)
    return _quantize(F.rms_norm(r, (x.shape[-1],), w, 1e-6))


# op -> (hetkern(x, w, r, out), torch eager (x, w, r), bytes moved per element
# of x given its element size, whether out is float8_e4m3fn)
OPS = {
    "rmsnorm": (lambda x, w, r, out: hetkern.rmsnorm(x, w, 1e-6, out=out), _rms, lambda e: 2 * e, False),
    "fused_add_rmsnorm": (lambda x, w, r, out: hetkern.fused_add_rmsnorm(x, r, w, 1e-6), _fused,
                          lambda e: 4 * e, False),
    "gemma_rmsnorm": (lambda x, w, r, out: hetkern.gemma_rmsnorm(x, w, 1e-6, out=out), _gemma,
                      lambda e: 2 * e, False),
    "gemma_fused_add_rmsnorm": (lambda x, w, r, out: hetkern.gemma_fused_add_rmsnorm(x, r, w, 1e-6),
                                _gemma_fused, lambda e: 4 * e, False),
    "layernorm": (lambda x, w, r, out: hetkern.layernorm(x, w, w, 1e-5, out=out), _ln, lambda e: 2 * e, False),
    "rmsnorm_quant": (lambda x, w, r, out: hetkern.rmsnorm_quant(out, x, w, _scale(x.device.type), 1e-6),
                      lambda x, w, r: _quantize(_rms(x, w, r)), lambda e: e + 1, True),
    "fused_add_rmsnorm_quant": (
        lambda x, w, r, out: hetkern.fused_add_rmsnorm_quant(out, x, r, w, _scale(x.device.type), 1e-6),
        _fused_quant, lambda e: 3 * e + 1, True),
    "layernorm_quant": (lambda x, w, r, out: hetkern.layernorm_quant(out, x, w, _scale(x.device.type), w, 1e-5),
                        lambda x, w, r: _quantize(_ln(x, w, r)), lambda e: e + 1, True),
}


def _gpu_peers(op, x, w, r, out) -> dict:
    """Liger (Triton; allocates its outputs; no quant ops) and FlashInfer
    (bfloat16; writes out, or x and r in place) where installed."""
    liger, fi, fi_extra = peers.liger(), peers.flashinfer(), peers.flashinfer_extra()
    scale = _scale(x.device.type)
    calls = {
        "liger": liger and {
            "rmsnorm": lambda: liger.liger_rms_norm(x, w, 1e-6),
            "fused_add_rmsnorm": lambda: liger.liger_fused_add_rms_norm(x, r, w, 1e-6),
            "gemma_rmsnorm": lambda: liger.liger_rms_norm(x, w, 1e-6, offset=1.0, casting_mode="gemma"),
            "gemma_fused_add_rmsnorm": lambda: liger.liger_fused_add_rms_norm(
                x, r, w, 1e-6, offset=1.0, casting_mode="gemma"),
            "layernorm": lambda: liger.liger_layer_norm(x, w, w, 1e-5),
        },
        "flashinfer": x.dtype == torch.bfloat16 and {
            **(fi and {
                "rmsnorm": lambda: fi.rmsnorm(x, w, 1e-6, out),
                "fused_add_rmsnorm": lambda: fi.fused_add_rmsnorm(x, r, w, 1e-6),
                "layernorm": lambda: fi.layernorm(x, w, w, 1e-5, out),
            } or {}),
            **(fi_extra and {
                "gemma_rmsnorm": lambda: fi_extra.gemma_rmsnorm(x, w, 1e-6, out),
                "gemma_fused_add_rmsnorm": lambda: fi_extra.gemma_fused_add_rmsnorm(x, r, w, 1e-6),
                "rmsnorm_quant": lambda: fi_extra.rmsnorm_quant(out, x, w, scale, 1e-6),
                "fused_add_rmsnorm_quant": lambda: fi_extra.fused_add_rmsnorm_quant(out, x, r, w, scale, 1e-6),
                "layernorm_quant": lambda: fi_extra.layernorm_quant(out, x, w, w, scale, 1e-5),
            } or {}),
        },
    }
    return {peer: ops[op] for peer, ops in calls.items() if ops and op in ops}


def _norm(op, tokens, hidden, dtype, device):
    ours, theirs, _, quant = OPS[op]
    x = randn((tokens, hidden), dtype, device, seed=1)
    r = randn((tokens, hidden), dtype, device, seed=2)
    w = randn(hidden, dtype, device, seed=3)
    out = torch.empty_like(x, dtype=torch.float8_e4m3fn if quant else x.dtype)
    return {"hetkern": lambda: ours(x, w, r, out), "torch": lambda: theirs(x, w, r),
            "compile": (theirs, (x, w, r)),
            **(_gpu_peers(op, x, w, r, out) if device == "cuda" else {})}


def cases(device: str, dtypes: list[str], max_elems: int, quick: bool) -> list[Case]:
    return [Case(FAMILY, op, dtype, (tokens, hidden), moved(element_size(dtype)) * tokens * hidden,
                 partial(_norm, op, tokens, hidden, dtype), rows=True)
            for op, (_, _, moved, _) in OPS.items()
            for dtype in dtypes
            for tokens, hidden in llm_shapes(max_elems, quick)]
