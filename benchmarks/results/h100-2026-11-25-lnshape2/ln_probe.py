"""layernorm row shapes (experiment): device time per call (CUDA graph of 20
calls, replayed) of the RowShapes picked by HETKERN_LN_SHAPE ("packs a
thread, most threads, 2 packs from"), against Liger, FlashInfer and rmsnorm's
own time on the same shape; every variant checked against torch."""
import os

import torch

import hetkern
from hetkern.bench import harness, norm

VARIANTS = ("2,512", "1,512", "1,512,512", "4,512", "2,256", "4,256", "2,128")
SHAPES = ((1, 4096), (128, 4096), (1, 2048), (32, 8192), (2048, 1024), (1024, 4096),
          (16384, 1024), (4096, 4096), (16384, 4096), (256, 16384))
for rows, hidden in SHAPES:
    fns = norm._norm("layernorm", rows, hidden, "bfloat16", "cuda")
    rms = norm._norm("rmsnorm", rows, hidden, "bfloat16", "cuda")
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(rows, hidden, device="cuda", dtype=torch.bfloat16, generator=g)
    w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(hidden, device="cuda", dtype=torch.bfloat16, generator=g)
    ref = torch.nn.functional.layer_norm(x.float(), (hidden,), w.float(), b.float(), 1e-5)
    cells = {}
    for v in VARIANTS:
        os.environ["HETKERN_LN_SHAPE"] = v
        out = hetkern.layernorm(x, w, b, 1e-5)
        err = (out.float() - ref).abs().max().item()
        t = harness.time_cuda_graph(fns["hetkern"], samples=9, max_total_s=0.3).median_s * 1e6
        cells[v] = f"{t:6.2f}" + ("" if err < 0.07 else f"(ERR {err:.3g})")
    del os.environ["HETKERN_LN_SHAPE"]
    for peer in ("liger", "flashinfer"):
        if peer in fns:
            cells[peer] = f"{harness.time_cuda_graph(fns[peer], samples=9, max_total_s=0.3).median_s * 1e6:6.2f}"
    cells["rmsnorm"] = f"{harness.time_cuda_graph(rms['hetkern'], samples=9, max_total_s=0.3).median_s * 1e6:6.2f}"
    print(f"layernorm {rows}x{hidden:<6} " + "  ".join(f"[{k}]={v}" for k, v in cells.items()), flush=True)
