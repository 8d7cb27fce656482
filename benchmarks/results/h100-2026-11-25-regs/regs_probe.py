"""Norm kernels of 2 packs a thread at 4 blocks of 512 an SM (32 registers)
against 3 (40): device time per call (CUDA graph of 20 calls, replayed) of
the build at hand, labelled by argv[1]; Liger and FlashInfer alongside."""
import sys

from hetkern.bench import harness, norm

CASES = [("layernorm", s) for s in ((1, 4096), (128, 4096), (1024, 4096), (4096, 4096), (16384, 4096), (4096, 8192))]
CASES += [(op, s) for op in ("rmsnorm", "rmsnorm_quant", "layernorm_quant")
          for s in ((128, 4096), (1024, 4096), (4096, 4096), (16384, 4096), (4096, 8192))]
for op, (rows, hidden) in CASES:
    fns = norm._norm(op, rows, hidden, "bfloat16", "cuda")
    cells = {k: harness.time_cuda_graph(v, samples=9, max_total_s=0.3).median_s * 1e6
             for k, v in fns.items() if k in ("hetkern", "liger", "flashinfer")}
    print(f"{sys.argv[1]:<8} {op:<16} {rows}x{hidden:<6} " + "  ".join(f"[{k}]={v:7.2f}" for k, v in cells.items()), flush=True)
