"""Rows of at most 1024 16-bit values on one warp (experiment): device time
per call (CUDA graph of 20 calls, replayed). layernorm(_quant) as built (one
warp for such rows); the RMS norms with and without HETKERN_RMS_ONE_WARP (set:
one warp for such rows too; unset: the shipped shape), against Liger and
FlashInfer; the layernorm checked against torch."""
import os

import torch

import hetkern
from hetkern.bench import harness, norm

SHAPES = ((1, 1024), (32, 1024), (128, 1024), (2048, 1024), (16384, 1024), (2048, 512), (1, 4096), (1024, 4096))
RMS = ("rmsnorm", "fused_add_rmsnorm", "gemma_fused_add_rmsnorm", "rmsnorm_quant", "fused_add_rmsnorm_quant")


def t(fn):
    return f"{harness.time_cuda_graph(fn, samples=9, max_total_s=0.3).median_s * 1e6:6.2f}"


for rows, hidden in SHAPES:
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(rows, hidden, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(hidden, device="cuda", dtype=torch.bfloat16, generator=g)
    ref = torch.nn.functional.layer_norm(x.float(), (hidden,), w.float(), b.float(), 1e-5)
    err = (hetkern.layernorm(x, w, b, 1e-5).float() - ref).abs().max().item()
    for op in ("layernorm", "layernorm_quant"):
        fns = norm._norm(op, rows, hidden, "bfloat16", "cuda")
        cells = {k: t(v) for k, v in fns.items() if k not in ("compile", "numpy", "torch")}
        print(f"{op:<24} {rows}x{hidden:<6} " + "  ".join(f"[{k}]={v}" for k, v in cells.items())
              + (f"  max err {err:.3g}" if op == "layernorm" else ""), flush=True)
    for op in RMS:
        fns = norm._norm(op, rows, hidden, "bfloat16", "cuda")
        cells = {"shipped": t(fns["hetkern"])}
        os.environ["HETKERN_RMS_ONE_WARP"] = "1"
        cells["one warp"] = t(fns["hetkern"])
        del os.environ["HETKERN_RMS_ONE_WARP"]
        cells.update({k: t(v) for k, v in fns.items() if k in ("liger", "flashinfer")})
        print(f"{op:<24} {rows}x{hidden:<6} " + "  ".join(f"[{k}]={v}" for k, v in cells.items()), flush=True)
