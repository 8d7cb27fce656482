"""Quick device-time probe for kernel work: hetkern against Liger and
FlashInfer (where installed) on chosen ops and shapes, each timed per call
from a replayed CUDA graph (hetkern.bench.harness.time_cuda_graph), without
the full sweep's torch.compile builds.

    python benchmarks/graph_probe.py [--ops rmsnorm,softmax] [--shapes 1x32000,32x32000,rope:4096x0]
        [--dtype float32] [--compile] [--ncu] [--buffers 4] [--device cpu --threads 1,16]

--device cpu times the same cases on the CPU instead (the Python call, out=
preallocated; hetkern, torch, and NumPy with --numpy where the case has it),
at each --threads count (hetkern's and torch's alike; default 1).

Rows are bfloat16 unless --dtype says otherwise; where the benchmark has the
case, a copy of the bytes it moves is timed too ("copy", and "of copy" =
copy time / hetkern time). --compile adds torch.compile as a contender.
--ncu runs each contender's call a few times without timing, for
`ncu --kernel-name ...` to profile hetkern's kernels and the peers' alike.
--rounds N times every contender of a case N times in turn, a row each round
(whether the first one timed, right after the previous case, is timed alike).
--buffers N gives every contender (and the copy) N sets of inputs, called in
turn: with one set, an in-place op of up to ~50 MB finds much of its data in
L2 from the previous call, by an amount that differed between contenders and
between runs (rope 4096 tokens, H100: 22.8-27.8 µs with one set, 31.7 with
four, Liger alike; benchmarks/results/h100-2026-11-27-stop40).
"""

from __future__ import annotations

import argparse

import torch

import hetkern
from hetkern.bench import activation, elementwise, harness, norm, reduce, rope, softmax

DECODE = [(t, h) for h in (2048, 4096, 8192) for t in (1, 8, 32, 128)]
LARGE = [(16384, 4096), (4096, 16384)]
CASES = {
    "rmsnorm": DECODE + [(16384, 8192)] + LARGE,
    "fused_add_rmsnorm": DECODE + [(16384, 8192)] + LARGE,
    "gemma_rmsnorm": DECODE + [(16384, 8192)] + LARGE,
    "gemma_fused_add_rmsnorm": DECODE + [(16384, 8192)] + LARGE,
    "layernorm": DECODE + [(4096, 4096)] + LARGE,
    "rmsnorm_quant": DECODE + [(16384, 8192)] + LARGE,
    "fused_add_rmsnorm_quant": DECODE + [(16384, 8192)] + LARGE,
    "layernorm_quant": DECODE + [(4096, 4096)] + LARGE,
    "silu_and_mul": [(t, 4096) for t in (1, 8, 32, 128)] + [(t, 14336) for t in (1, 128)] + [(16384, 8192)],
    "gelu_and_mul": [(t, 4096) for t in (1, 32, 128)] + [(16384, 8192)],
    "gelu_tanh_and_mul": [(t, 4096) for t in (1, 32, 128)] + [(16384, 8192)],
    "rope": [(t, 0) for t in (1, 8, 32, 128, 1024, 4096, 16384)],
    "softmax": [(r, v) for v in (32000, 128256, 151936) for r in (1, 32, 64, 256, 4096)]
    + [(4096, 4096), (16384, 1024), (16384, 4096), (1024, 16384), (16384, 16384)]
    + [(r, 1 << 20) for r in (1, 2, 8, 16)] + [(4, 1 << 22), (256, 1 << 18)],
    "log_softmax": [(r, v) for v in (32000, 128256) for r in (1, 256, 4096)] + [(1, 1 << 20), (4, 1 << 22), (256, 1 << 18)],
    # activations on n bfloat16 values, elementwise ops on 2^28 float32 ones (rows x cols = 1 x n)
    **{op: [(1, n) for n in (1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 26)]
       for op in ("exp", "gelu", "silu", "gelu_tanh")},
    "scale": [(1, 1 << 28)],
    "add": [(1, 1 << 28)],
    "div": [(1, 1 << 28)],
    # whole-array reductions of n values (1 x n)
    **{op: [(1, n) for n in (1 << 24, 1 << 26)] for op in reduce.OPS},
}


def contenders(op, rows, cols, dtype, device="cuda"):
    if op in norm.OPS:
        return norm._norm(op, rows, cols, dtype, device)
    if op in activation.GATED:
        return activation._gated(op, rows, cols, dtype, device)
    if op in activation.UNARY:
        return activation._unary(op, rows * cols, dtype, device)
    if op in reduce.OPS:
        return reduce._reduce(op, False, rows * cols, dtype, device)
    if op == "rope":
        return rope._rope(rows, dtype, device)
    if op == "scale":
        return elementwise._scale(rows * cols, dtype, device)
    if op in ("add", "div"):
        return elementwise._binary(op, rows * cols, dtype, device)
    return softmax._softmax(op, (rows, cols), dtype, device)


def moved_bytes(op, rows, cols, dtype, device="cuda"):
    """The bytes the benchmark's case of this op and shape moves, or None."""
    for family in (norm, activation, reduce, softmax):
        for case in family.cases(device, [dtype], rows * cols, False):
            if case.op == op and case.size == rows * cols and case.shape[-1] in (cols, rows * cols):
                return case.nbytes
    return None


def probe_cuda(op, rows, cols, args):
    # args.buffers sets of every contender's inputs, called in turn
    sets = [contenders(op, rows, cols, args.dtype) for _ in range(max(1, args.buffers))]
    for s in sets:
        s.pop("numpy", None)
        compiled = s.pop("compile", None)
        if args.compile and compiled is not None:
            fn, fn_args = compiled
            s["compile"] = lambda fn=torch.compile(fn), fn_args=fn_args: fn(*fn_args)
    fns = {name: harness.in_turn([s[name] for s in sets]) for name in sets[0]}
    if args.ncu:  # each contender three times, for Nsight Compute to pick kernels from
        for fn in fns.values():
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        return
    nbytes = moved_bytes(op, rows, cols, args.dtype)
    copies = [harness.copy_fn("cuda", nbytes) for _ in range(max(1, args.buffers))] if nbytes else []
    for round_ in range(args.rounds):  # every contender, then the copy, once a round
        times = {}
        for name, fn in fns.items():
            try:
                times[name] = harness.time_cuda_graph(fn, samples=7, max_total_s=0.3).median_s
            except Exception as e:  # noqa: BLE001 - a peer without this shape
                times[name] = None
                print(f"  {name} failed: {type(e).__name__}: {str(e)[:80]}")
        copy = None
        if copies:
            copy = harness.time_cuda_graph(harness.in_turn(copies), samples=7, max_total_s=0.3).median_s
        report(op, rows, cols, args.dtype, times, copy, f" r{round_ + 1}" if args.rounds > 1 else "")
    del fns
    torch.cuda.empty_cache()


def probe_cpu(op, rows, cols, args):
    fns = contenders(op, rows, cols, args.dtype, "cpu")
    fns.pop("compile", None)
    if not args.numpy:
        fns.pop("numpy", None)
    nbytes = moved_bytes(op, rows, cols, args.dtype, "cpu")
    for threads in map(int, args.threads.split(",")):
        hetkern.set_num_threads(threads)
        torch.set_num_threads(threads)
        # best of 7 samples (a shared machine's least disturbed figure)
        times = {name: harness.time_cpu(fn, samples=7, max_total_s=0.5).min_s for name, fn in fns.items()}
        copy = None
        if nbytes is not None:
            copy = harness.time_cpu(harness.copy_fn("cpu", nbytes), samples=7, max_total_s=0.5).min_s
        report(op, rows, cols, args.dtype, times, copy, f" {threads:>2}t")


def report(op, rows, cols, dtype, times, copy, threads):
    peers = {k: v for k, v in times.items() if k != "hetkern" and v is not None}
    best = min(peers, key=peers.get) if peers else None
    cells = "  ".join(f"{k}={v * 1e6:7.2f}" for k, v in times.items() if v is not None)
    ratio = f"{peers[best] / times['hetkern']:.2f} ({best})" if best else "-"
    if copy is not None:
        cells += f"  copy={copy * 1e6:7.2f}"
        ratio += f"  of-copy={copy / times['hetkern']:.2f}"
    print(f"{op:<18} {dtype:<9} {rows}x{cols:<7}{threads} {cells}  best/h={ratio}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ops", default=",".join(CASES))
    p.add_argument("--shapes", help="these ROWSxCOLS instead of the ops' cases (rope: TOKENSx0); "
                                    "OP:ROWSxCOLS entries are that op's alone, and an op that has "
                                    "such entries takes no others")
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--compile", action="store_true", help="torch.compile as a contender too")
    p.add_argument("--ncu", action="store_true")
    p.add_argument("--buffers", type=int, default=1,
                   help="CUDA: N sets of each contender's inputs (and of the copy's buffers), "
                        "called in turn, so that a call's data is not left in L2 by the previous "
                        "call (the inputs of a serving step come from other kernels)")
    p.add_argument("--rounds", type=int, default=1,
                   help="CUDA: time every contender (and the copy) this many times in turn, one row "
                        "each round: whether the first contender of a case is timed alike")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--threads", default="1", help="CPU thread counts, e.g. 1,16")
    p.add_argument("--numpy", action="store_true", help="CPU: NumPy as a contender too, where it has the op")
    args = p.parse_args()
    shared, own = [], {}  # shapes for every op; OP: shapes for that op only
    for entry in args.shapes.split(",") if args.shapes else []:
        op, _, shape = entry.rpartition(":")
        (own.setdefault(op, []) if op else shared).append(tuple(map(int, shape.split("x"))))
    unknown = set(own) - set(args.ops.split(","))
    if unknown:
        p.error(f"--shapes names ops not in --ops: {', '.join(sorted(unknown))}")
    probe = probe_cpu if args.device == "cpu" else probe_cuda
    for op in args.ops.split(","):
        for rows, cols in own.get(op) or shared or CASES[op]:
            probe(op, rows, cols, args)


if __name__ == "__main__":
    main()
