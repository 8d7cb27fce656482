"""Softmax register-row kernel: a block per row tile (HETKERN_SOFTMAX_TILES,
experiment build only) against the shipped grid of at most 16 blocks an SM
looping over tiles. Device time per call (CUDA graph of 20 calls, replayed),
bfloat16, against Liger; both launches' results checked bit-equal."""
import os

import torch

import hetkern
from hetkern.bench import harness, softmax

SHAPES = ((1, 4096), (128, 4096), (4096, 4096), (16384, 4096), (65536, 4096), (16384, 1024),
          (65536, 256), (8192, 8192), (4096, 16384), (1024, 16384))
for op in ("softmax", "log_softmax"):
    for rows, cols in SHAPES:
        fns = softmax._softmax(op, (rows, cols), "bfloat16", "cuda")
        x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
        fn = getattr(hetkern, op)
        a = fn(x)
        os.environ["HETKERN_SOFTMAX_TILES"] = "1"
        b = fn(x)
        tiles = harness.time_cuda_graph(fns["hetkern"], samples=9, max_total_s=0.3).median_s * 1e6
        del os.environ["HETKERN_SOFTMAX_TILES"]
        shipped = harness.time_cuda_graph(fns["hetkern"], samples=9, max_total_s=0.3).median_s * 1e6
        cells = {"shipped": shipped, "tiles": tiles}
        if "liger" in fns:
            cells["liger"] = harness.time_cuda_graph(fns["liger"], samples=9, max_total_s=0.3).median_s * 1e6
        same = "same bits" if torch.equal(a, b) else "DIFFERENT BITS"
        print(f"{op:<12} {rows}x{cols:<6} " + "  ".join(f"[{k}]={v:7.2f}" for k, v in cells.items()) + f"  {same}", flush=True)
