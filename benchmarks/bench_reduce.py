"""hetkern.sum/max/dot/norm against torch and NumPy (CPU) and torch (GPU).

    python benchmarks/bench_reduce.py [--cpu-max 16M] [--gpu-max 256M] [--threads 1] [--csv out.csv]

Two layouts per size n: one row (axis=None, the whole array) and rows of 1024
(axis=-1). For each: median time per call, GB/s (bytes read, plus the tiny
output), ratios peer time / hetkern time (> 1: hetkern is faster), and the
fraction of the copy bandwidth measured in the same run (copying the input:
n elements read + written). CPU contenders run at the same thread count
(--threads; torch.set_num_threads, hetkern.set_num_threads; NumPy's
reductions are single-threaded, so its column is only fair at 1 thread).
Peers: torch.sum / torch.amax / (x*y).sum(-1) / torch.linalg.vector_norm,
np.sum / np.max / np.einsum / np.linalg.norm; torch.compile on GPU when
triton is importable.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import gpu_available, parse_size, size_label, sizes_up_to, time_cpu, time_cuda, write_csv  # noqa: E402

import hetkern  # noqa: E402

ROW = 1024
OPS = ["sum", "max", "dot", "norm"]






def hetkern_call(op, x, y, axis, out):
    if op == "dot":
        return lambda: hetkern.dot(x, y, axis=axis, out=out)
    fn = getattr(hetkern, op)
    return lambda: fn(x, axis=axis, out=out)


def torch_call(op, x, y, axis):
    import torch

    dim = -1 if axis == -1 else None
    if op == "sum":
        return lambda: torch.sum(x, dim=dim) if dim is not None else torch.sum(x)
    if op == "max":
        return lambda: torch.amax(x, dim=-1 if dim is not None else ())
    if op == "dot":
        return lambda: (x * y).sum(dim) if dim is not None else (x * y).sum()
    return lambda: torch.linalg.vector_norm(x, dim=dim)


def numpy_call(op, x, y, axis):
    if op == "sum":
        return lambda: np.sum(x, axis=axis)
    if op == "max":
        return lambda: np.max(x, axis=axis)
    if op == "dot":
        spec = "ij,ij->i" if axis == -1 else "ij,ij->"
        return lambda: np.einsum(spec, x, y)
    return lambda: np.linalg.norm(x, axis=axis) if axis is not None else np.linalg.norm(x.ravel())


def report(rows, device, op, layout, n, nbytes, t_h, peers, t_copy, copy_bytes):
    copy_gbps = copy_bytes / t_copy.median_s / 1e9
    row = dict(device=device, op=op, layout=layout, n=n, hetkern_s=t_h.median_s,
               hetkern_gbps=t_h.gbps(nbytes), copy_gbps=copy_gbps,
               of_copy=t_h.gbps(nbytes) / copy_gbps)
    ratios = []
    for name, t in peers.items():
        row[f"{name}_s"] = t.median_s
        ratios.append(f"x{name} {t.median_s / t_h.median_s:5.2f}")
    rows.append(row)
    print(f"{op:>4} {layout:>7} {size_label(n):>5} {t_h.median_s * 1e6:>9.1f}us "
          f"{t_h.gbps(nbytes):>7.1f} GB/s  copy {copy_gbps:>6.1f}  of copy {row['of_copy']:4.2f}  "
          + "  ".join(ratios))


def bench_cpu(limit: int, threads: int, rows: list[dict]) -> None:
    import torch

    torch.set_num_threads(threads)
    hetkern.set_num_threads(threads)
    print(f"\nCPU float32, {threads} thread(s) for hetkern and torch; NumPy single-threaded; "
          f"hetkern target {hetkern.cpu_target()}")
    for n in sizes_up_to(limit, 12):
        rng = np.random.default_rng(0)
        xn = rng.standard_normal(n).astype(np.float32)
        yn = rng.standard_normal(n).astype(np.float32)
        xt, yt = torch.from_numpy(xn), torch.from_numpy(yn)
        dst = np.empty_like(xn)
        t_copy = time_cpu(lambda: np.copyto(dst, xn))
        for layout, shape, axis in (("whole", (1, n), None), ("rows", (n // ROW, ROW), -1)):
            x, y = xn.reshape(shape), yn.reshape(shape)
            tx, ty = xt.view(shape), yt.view(shape)
            out = np.empty(() if axis is None else shape[:-1], np.float32)
            for op in OPS:
                nbytes = x.nbytes * (2 if op == "dot" else 1) + out.nbytes
                t_h = time_cpu(hetkern_call(op, x, y, axis, out))
                peers = {"torch": time_cpu(torch_call(op, tx, ty, axis)),
                         "numpy": time_cpu(numpy_call(op, x, y, axis))}
                report(rows, "cpu", op, layout, n, nbytes, t_h, peers, t_copy, 2 * xn.nbytes)


def bench_gpu(limit: int, rows: list[dict]) -> None:
    import torch

    try:
        import triton  # noqa: F401

        compile_ok = True
    except ImportError:
        compile_ok = False
    print(f"\nGPU float32 ({torch.cuda.get_device_name()}); CUDA-event times; "
          f"torch.compile {'on' if compile_ok else 'off (no triton)'}")
    for n in sizes_up_to(limit, 12):
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        dst = torch.empty_like(x)
        t_copy = time_cuda(lambda: dst.copy_(x))
        for layout, shape, axis in (("whole", (1, n), None), ("rows", (n // ROW, ROW), -1)):
            tx, ty = x.view(shape), y.view(shape)
            out = torch.empty(() if axis is None else shape[:-1], device="cuda")
            for op in OPS:
                nbytes = tx.numel() * 4 * (2 if op == "dot" else 1) + out.numel() * 4
                t_h = time_cuda(hetkern_call(op, tx, ty, axis, out))
                peers = {"torch": time_cuda(torch_call(op, tx, ty, axis))}
                if compile_ok:
                    compiled = torch.compile(torch_call(op, tx, ty, axis))
                    peers["compile"] = time_cuda(compiled)
                report(rows, "cuda", op, layout, n, nbytes, t_h, peers, t_copy, 2 * x.numel() * 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-max", default="16M", type=parse_size)
    parser.add_argument("--gpu-max", default="256M", type=parse_size)
    parser.add_argument("--threads", default=1, type=int)
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    rows: list[dict] = []
    if args.cpu_max:
        bench_cpu(args.cpu_max, args.threads, rows)
    if gpu_available() and args.gpu_max:
        bench_gpu(args.gpu_max, rows)
    write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
