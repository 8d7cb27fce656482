"""Rope launch shapes (experiment): device time per call (CUDA graph of 20
calls, replayed) of the launcher variants picked by HETKERN_ROPE_VARIANT,
against Liger and FlashInfer, at the benchmark's shapes (32 q + 8 kv heads of
128, NeoX, bfloat16, bfloat16 cache); every variant's result checked bit-equal
to the shipped kernel's (variant a)."""
import os

import torch

import hetkern
from hetkern.bench import harness, rope

VARIANTS = ("a", "h2", "h4", "h8", "b1")
for tokens in (1, 16, 128, 512, 1024, 2048, 4096, 8192, 16384):
    fns = rope._rope(tokens, "bfloat16", "cuda")
    cells = {}
    positions, query, key, cache = None, None, None, None
    g = torch.Generator().manual_seed(tokens)
    pos = torch.randint(0, rope.MAX_POSITION, (tokens,), generator=g).cuda()
    q0 = torch.randn(tokens, rope.NUM_HEADS * rope.HEAD_SIZE, generator=g).to(torch.bfloat16).cuda()
    k0 = torch.randn(tokens, rope.NUM_KV_HEADS * rope.HEAD_SIZE, generator=g).to(torch.bfloat16).cuda()
    cache = torch.randn(rope.MAX_POSITION, rope.HEAD_SIZE, generator=g).to(torch.bfloat16).cuda()
    ref = None
    for v in VARIANTS:
        os.environ["HETKERN_ROPE_VARIANT"] = v
        q, k = q0.clone(), k0.clone()
        hetkern.rope(pos, q, k, rope.HEAD_SIZE, cache, True)
        torch.cuda.synchronize()
        if ref is None:
            ref = (q, k)
        ok = torch.equal(q, ref[0]) and torch.equal(k, ref[1])
        t = harness.time_cuda_graph(fns["hetkern"], samples=9, max_total_s=0.3).median_s * 1e6
        cells[v] = f"{t:6.2f}" + ("" if ok else "(MISMATCH)")
    os.environ["HETKERN_ROPE_VARIANT"] = "a"
    for peer in ("liger", "flashinfer"):
        if peer in fns:
            cells[peer] = f"{harness.time_cuda_graph(fns[peer], samples=9, max_total_s=0.3).median_s * 1e6:6.2f}"
    print(f"rope {tokens:>6} tokens  " + "  ".join(f"{k}={v}" for k, v in cells.items()), flush=True)
