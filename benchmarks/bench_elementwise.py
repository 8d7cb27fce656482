"""hetkern add/mul/axpby/cast against torch eager and NumPy (CPU) and torch
eager / torch.compile (GPU).

    python benchmarks/bench_elementwise.py [--cpu-max 16M] [--gpu-max 256M]
        [--threads 1,2] [--csv out.csv]

For each case and size: median time per call, GB/s (bytes read + written)
and ratios peer time / hetkern time (> 1: hetkern faster), plus hetkern's
fraction of the copy bandwidth measured in the same run (np.copyto on CPU,
copy_ on GPU, of the same bytes). CPU: hetkern and torch run with the same
thread count (each --threads value); NumPy is single-threaded and is listed
in the 1-thread rows only.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import gpu_available, parse_size, size_label, sizes_up_to, time_cpu, time_cuda, write_csv  # noqa: E402

import hetkern  # noqa: E402

ROW = 1024  # row length of the broadcast cases: x is (n / ROW, ROW), y is (ROW,)




def cases(torch):
    """(name, dtype, out dtype, make(x, y, o) -> {library: fn}, arrays read, arrays written)."""
    f32, bf16 = torch.float32, torch.bfloat16
    return [
        ("add", f32, f32, lambda x, y, o: {
            "hetkern": lambda: hetkern.add(x, y, out=o),
            "torch": lambda: torch.add(x, y, out=o),
            "numpy": lambda: np.add(x.numpy(), y.numpy(), out=o.numpy())}, 2),
        ("add (N,1024)+(1024,)", f32, f32, lambda x, y, o: {
            "hetkern": lambda: hetkern.add(x.view(-1, ROW), y[:ROW], out=o.view(-1, ROW)),
            "torch": lambda: torch.add(x.view(-1, ROW), y[:ROW], out=o.view(-1, ROW)),
            "numpy": lambda: np.add(x.numpy().reshape(-1, ROW), y[:ROW].numpy(),
                                    out=o.numpy().reshape(-1, ROW))}, 1),
        ("mul by 0.3", f32, f32, lambda x, y, o: {
            "hetkern": lambda: hetkern.mul(x, 0.3, out=o),
            "torch": lambda: torch.mul(x, 0.3, out=o),
            "numpy": lambda: np.multiply(x.numpy(), np.float32(0.3), out=o.numpy())}, 1),
        ("div bf16", bf16, bf16, lambda x, y, o: {
            "hetkern": lambda: hetkern.div(x, y, out=o),
            "torch": lambda: torch.div(x, y, out=o)}, 2),
        ("axpby", f32, f32, lambda x, y, o: {
            "hetkern": lambda: hetkern.axpby(x, y, 0.5, 2.0, out=o),
            # torch's eager a*x + b*y allocates two temporaries; add(alpha=) fuses
            # one product but rounds differently, so time the exact expression.
            "torch": lambda: torch.add(torch.mul(x, 0.5), torch.mul(y, 2.0), out=o),
            "numpy": lambda: np.add(np.multiply(x.numpy(), np.float32(0.5)),
                                    np.multiply(y.numpy(), np.float32(2.0)), out=o.numpy())}, 2),
        ("cast f32->bf16", f32, bf16, lambda x, y, o: {
            "hetkern": lambda: hetkern.cast(x, torch.bfloat16, out=o),
            "torch": lambda: o.copy_(x)}, 1),
        ("cast f32->f16", f32, torch.float16, lambda x, y, o: {
            "hetkern": lambda: hetkern.cast(x, torch.float16, out=o),
            "torch": lambda: o.copy_(x),
            "numpy": lambda: np.copyto(o.numpy(), x.numpy(), casting="unsafe")}, 1),
    ]




def nbytes(x, o, reads: int) -> int:
    return reads * x.numel() * x.element_size() + o.numel() * o.element_size()


def print_header(peers):
    cols = "".join(f"{p:>10} {'x' + p:>8}" for p in peers)
    print(f"{'case':>22} {'n':>5} {'hetkern':>10} {'GB/s':>7}{cols} {'of copy':>8}")


def bench_cpu(limit: int, thread_counts: list[int], rows: list[dict]) -> None:
    import torch

    print(f"\nCPU (hetkern target {hetkern.cpu_target()}; hetkern and torch at the same thread "
          f"count; NumPy single-threaded, shown at 1 thread)")
    for threads in thread_counts:
        torch.set_num_threads(threads)
        hetkern.set_num_threads(threads)
        print(f"\n-- {threads} thread(s)")
        print_header(["torch", "numpy"])
        for name, dtype, out_dtype, make, reads in cases(torch):
            for n in sizes_up_to(limit, 12, 4):
                x = torch.randn(n, dtype=torch.float32).to(dtype)
                y = torch.randn(n, dtype=torch.float32).to(dtype) + 2
                o = torch.empty(n, dtype=out_dtype)
                fns = make(x, y, o)
                if threads != 1:
                    fns.pop("numpy", None)
                total = nbytes(x, o, reads)
                # Copy of the same bytes: half read, half written.
                src = np.empty(total // 2, np.uint8)
                dst = np.empty_like(src)
                t_copy = time_cpu(lambda: np.copyto(dst, src))
                times = {lib: time_cpu(fn) for lib, fn in fns.items()}
                emit("cpu", threads, name, n, total, times, t_copy, ["torch", "numpy"], rows)
    hetkern.set_num_threads(0)


def emit(device, threads, name, n, total, times, t_copy, peers, rows):
    t_h = times["hetkern"]
    line = f"{name:>22} {size_label(n):>5} {t_h.median_s * 1e6:>8.1f}us {t_h.gbps(total):>7.1f}"
    row = dict(device=device, threads=threads, case=name, n=n, bytes=total,
               hetkern_s=t_h.median_s, copy_s=t_copy.median_s)
    for p in peers:
        if p in times:
            row[f"{p}_s"] = times[p].median_s
            line += f" {times[p].median_s * 1e6:>8.1f}us {times[p].median_s / t_h.median_s:>8.2f}"
        else:
            line += f" {'-':>10} {'-':>8}"
    line += f" {t_copy.median_s / t_h.median_s:>8.2f}"
    rows.append(row)
    print(line)


def bench_gpu(limit: int, rows: list[dict]) -> None:
    import torch

    try:
        import triton  # noqa: F401

        compiled = True
    except ImportError:
        compiled = False
    print(f"\nGPU ({torch.cuda.get_device_name()}); CUDA-event times"
          + ("" if compiled else "; torch.compile skipped (no triton)"))
    print_header(["torch", "compile"])
    for name, dtype, out_dtype, make, reads in cases(torch):
        for n in [s for s in (1 << p for p in range(16, 40, 4)) if s <= limit]:
            x = torch.randn(n, device="cuda", dtype=torch.float32).to(dtype)
            y = torch.randn(n, device="cuda", dtype=torch.float32).to(dtype) + 2
            o = torch.empty(n, device="cuda", dtype=out_dtype)
            fns = make(x, y, o)
            fns.pop("numpy", None)
            if compiled:
                try:
                    fn = torch.compile(fns["torch"])
                    fn()
                    fns["compile"] = fn
                except Exception as e:  # out= forms do not always compile
                    print(f"   torch.compile failed for {name}: {type(e).__name__}")
            total = nbytes(x, o, reads)
            src = torch.empty(total // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            t_copy = time_cuda(lambda: dst.copy_(src))
            times = {lib: time_cuda(fn) for lib, fn in fns.items()}
            emit("cuda", 0, name, n, total, times, t_copy, ["torch", "compile"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-max", default="16M", type=parse_size)
    parser.add_argument("--gpu-max", default="256M", type=parse_size)
    parser.add_argument("--threads", default=f"1,{os.cpu_count()}",
                        help="comma-separated CPU thread counts")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    rows: list[dict] = []
    if args.cpu_max:
        threads = sorted({int(t) for t in args.threads.split(",")})
        bench_cpu(args.cpu_max, threads, rows)
    if gpu_available() and args.gpu_max:
        bench_gpu(args.gpu_max, rows)
    write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
