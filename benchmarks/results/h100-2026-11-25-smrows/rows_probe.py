"""Softmax rows of 5120-12288 16-bit values: 256 threads of 4 packs (the
build labelled "rows256") against 512 of 2 (as committed, "shipped"). Device
time per call (CUDA graph of 20 calls, replayed) of the build at hand,
labelled by argv[1], Liger alongside; a checksum of each result, which must
match between builds (the same sums in a different order may differ in the
last bit, so the checksum is compared loosely)."""
import sys

import torch

import hetkern
from hetkern.bench import harness, softmax

CASES = [(r, c, "bfloat16") for c in (4096, 5120, 6144, 8192, 12288, 16384) for r in (1, 32, 1024, 8192)]
CASES += [(r, 8192, "float32") for r in (32, 4096)]
for op in ("softmax", "log_softmax"):
    for rows, cols, dtype in CASES:
        fns = softmax._softmax(op, (rows, cols), dtype, "cuda")
        cells = {k: harness.time_cuda_graph(v, samples=9, max_total_s=0.3).median_s * 1e6
                 for k, v in fns.items() if k in ("hetkern", "liger")}
        g = torch.Generator(device="cuda").manual_seed(rows + cols)
        x = torch.randn(rows, cols, device="cuda", dtype=getattr(torch, dtype), generator=g) * 4
        ref = getattr(torch, op)(x.double(), -1)
        err = (getattr(hetkern, op)(x).double() - ref).abs().max().item()
        print(f"{sys.argv[1]:<8} {op:<12} {dtype:<9} {rows}x{cols:<6} "
              + "  ".join(f"[{k}]={v:7.2f}" for k, v in cells.items()) + f"  maxerr={err:.3g}", flush=True)
