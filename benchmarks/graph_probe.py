"""Quick device-time probe for kernel work: hetkern against Liger and
FlashInfer (where installed) on chosen ops and shapes, each timed per call
from a replayed CUDA graph (hetkern.bench.harness.time_cuda_graph), without
the full sweep's torch.compile builds.

    python benchmarks/graph_probe.py [--ops rmsnorm,softmax] [--shapes 1x32000,32x32000] [--ncu]

--ncu runs each hetkern call a few times without timing, for
`ncu --kernel-name ...` to profile.
"""

from __future__ import annotations

import argparse

import torch

from hetkern.bench import activation, elementwise, harness, norm, rope, softmax

DECODE = [(t, h) for h in (2048, 4096, 8192) for t in (1, 8, 32, 128)]
CASES = {
    "rmsnorm": DECODE + [(16384, 8192)],
    "fused_add_rmsnorm": DECODE + [(16384, 8192)],
    "gemma_rmsnorm": DECODE + [(16384, 8192)],
    "gemma_fused_add_rmsnorm": DECODE + [(16384, 8192)],
    "layernorm": DECODE + [(4096, 4096), (16384, 4096)],
    "rmsnorm_quant": DECODE + [(16384, 8192)],
    "fused_add_rmsnorm_quant": DECODE + [(16384, 8192)],
    "layernorm_quant": DECODE + [(4096, 4096)],
    "silu_and_mul": [(t, 4096) for t in (1, 8, 32, 128)] + [(t, 14336) for t in (1, 128)] + [(16384, 8192)],
    "gelu_and_mul": [(t, 4096) for t in (1, 32, 128)] + [(16384, 8192)],
    "gelu_tanh_and_mul": [(t, 4096) for t in (1, 32, 128)] + [(16384, 8192)],
    "rope": [(t, 0) for t in (1, 8, 32, 128)],
    "softmax": [(r, v) for v in (32000, 128256, 151936) for r in (1, 32, 64, 256, 4096)] + [(4096, 4096), (16384, 4096)],
    "log_softmax": [(r, v) for v in (32000, 128256) for r in (1, 256, 4096)],
    # activations on n bfloat16 values, elementwise ops on 2^28 float32 ones (rows x cols = 1 x n)
    **{op: [(1, n) for n in (1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 26)]
       for op in ("exp", "gelu", "silu", "gelu_tanh")},
    "scale": [(1, 1 << 28)],
    "add": [(1, 1 << 28)],
}


def contenders(op, rows, cols):
    if op in norm.OPS:
        return norm._norm(op, rows, cols, "bfloat16", "cuda")
    if op in activation.GATED:
        return activation._gated(op, rows, cols, "bfloat16", "cuda")
    if op in activation.UNARY:
        return activation._unary(op, rows * cols, "bfloat16", "cuda")
    if op == "rope":
        return rope._rope(rows, "bfloat16", "cuda")
    if op == "scale":
        return elementwise._scale(rows * cols, "float32", "cuda")
    if op == "add":
        return elementwise._binary("add", rows * cols, "float32", "cuda")
    return softmax._softmax(op, (rows, cols), "bfloat16", "cuda")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ops", default=",".join(CASES))
    p.add_argument("--shapes", help="only these ROWSxCOLS of the ops' cases")
    p.add_argument("--ncu", action="store_true")
    args = p.parse_args()
    only = set(args.shapes.split(",")) if args.shapes else None
    for op in args.ops.split(","):
        for rows, cols in CASES[op]:
            if only is not None and f"{rows}x{cols}" not in only:
                continue
            fns = contenders(op, rows, cols)
            fns.pop("compile", None)
            fns.pop("numpy", None)
            if args.ncu:
                for _ in range(3):
                    fns["hetkern"]()
                torch.cuda.synchronize()
                continue
            times = {}
            for name, fn in fns.items():
                try:
                    times[name] = harness.time_cuda_graph(fn, samples=7, max_total_s=0.3).median_s
                except Exception as e:  # noqa: BLE001 - a peer without this shape
                    times[name] = None
                    print(f"  {name} failed: {type(e).__name__}: {str(e)[:80]}")
            peers = {k: v for k, v in times.items() if k != "hetkern" and v is not None}
            best = min(peers, key=peers.get) if peers else None
            cells = "  ".join(f"{k}={v * 1e6:7.2f}" for k, v in times.items() if v is not None)
            ratio = f"{peers[best] / times['hetkern']:.2f} ({best})" if best else "-"
            print(f"{op:<18} {rows}x{cols:<7} {cells}  best/h={ratio}", flush=True)
            del fns
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
