"""Does writing in place cost the fused norms their decode time? Device time
per call (CUDA graph of 20 calls, replayed) of the same kernels in place and
not, and of the fused op on 20 distinct (x, residual) pairs, so that no call
reads what the previous one wrote. Liger allocates its outputs; FlashInfer
writes in place."""
import itertools

import torch

import hetkern
from hetkern.bench import harness, peers


def t(fn):
    return harness.time_cuda_graph(fn, samples=9, max_total_s=0.3).median_s * 1e6


liger, fi = peers.liger(), peers.flashinfer()
bf = torch.bfloat16
for rows, hidden in ((1, 4096), (32, 4096), (128, 4096), (1, 2048), (128, 8192)):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(rows, hidden, device="cuda", dtype=bf, generator=g)
    r = torch.randn(rows, hidden, device="cuda", dtype=bf, generator=g)
    w = torch.randn(hidden, device="cuda", dtype=bf, generator=g)
    o = torch.empty_like(x)
    xs = [x.clone() for _ in range(20)]
    rs = [r.clone() for _ in range(20)]
    turn = itertools.cycle(range(20))

    def rotating(op):
        def call():
            k = next(turn)
            op(xs[k], rs[k])
        return call

    res = {
        "rms out": t(lambda: hetkern.rmsnorm(x, w, 1e-6, out=o)),
        "rms in-place": t(lambda: hetkern.rmsnorm(x, w, 1e-6, out=x)),
        "fused": t(lambda: hetkern.fused_add_rmsnorm(x, r, w, 1e-6)),
        "fused 20 pairs": t(rotating(lambda a, b: hetkern.fused_add_rmsnorm(a, b, w, 1e-6))),
        "gemma fused": t(lambda: hetkern.gemma_fused_add_rmsnorm(x, r, w, 1e-6)),
        "ln out": t(lambda: hetkern.layernorm(x, w, w, 1e-5, out=o)),
        "ln in-place": t(lambda: hetkern.layernorm(x, w, w, 1e-5, out=x)),
        "torch mul out": t(lambda: torch.mul(x, 2, out=o)),
        "torch mul_": t(lambda: x.mul_(1)),
        "scale out": t(lambda: hetkern.scale(x, 1.0, out=o)),
        "scale in-place": t(lambda: hetkern.scale(x, 1.0, out=x)),
    }
    if liger is not None:
        res["liger rms"] = t(lambda: liger.liger_rms_norm(x, w, 1e-6))
        res["liger fused"] = t(lambda: liger.liger_fused_add_rms_norm(x, r, w, 1e-6))
        res["liger ln"] = t(lambda: liger.liger_layer_norm(x, w, w, 1e-5))
    if fi is not None:
        res["fi fused (in place)"] = t(lambda: fi.fused_add_rmsnorm(x, r, w, 1e-6))
        res["fi fused 20 pairs"] = t(rotating(lambda a, b: fi.fused_add_rmsnorm(a, b, w, 1e-6)))
    print(f"{rows}x{hidden}: " + "  ".join(f"{k}={v:.2f}" for k, v in res.items()), flush=True)
