"""hetkern.scale against NumPy and torch (CPU) and torch (GPU), float32.

    python benchmarks/bench_scale.py [--cpu-max 64M] [--gpu-max 256M] [--csv out.csv]

For each size: median time per call, GB/s (bytes read + written), and ratios
(peer time / hetkern time, so > 1 means hetkern is faster), plus the fraction
of the copy bandwidth measured in the same run (torch's copy_ at the same
thread count on CPU, copy_ on GPU). On the CPU, hetkern and torch run at the
same thread count (--threads, default 1 and all cores); NumPy has one thread.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import gpu_available, parse_size, size_label, sizes_up_to, time_cpu, time_cuda, write_csv  # noqa: E402

import hetkern  # noqa: E402






def bench_cpu(limit: int, threads: int, rows: list[dict]) -> None:
    import torch

    torch.set_num_threads(threads)
    hetkern.set_num_threads(threads)
    print(f"\nCPU float32 ({threads} thread(s) for hetkern, torch and the copy; NumPy 1; "
          f"hetkern target {hetkern.cpu_target()})")
    print(f"{'n':>6} {'hetkern':>10} {'GB/s':>7} {'numpy':>10} {'torch':>10} {'copy GB/s':>9} "
          f"{'x numpy':>8} {'x torch':>8} {'of copy':>8}")
    for n in sizes_up_to(limit):
        x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        o = np.empty_like(x)
        xt, ot = torch.from_numpy(x), torch.from_numpy(o)
        nbytes = 2 * x.nbytes
        t_h = time_cpu(lambda: hetkern.scale(x, 2.0, out=o))
        t_np = time_cpu(lambda: np.multiply(x, 2.0, out=o))
        t_t = time_cpu(lambda: torch.mul(xt, 2.0, out=ot))
        t_c = time_cpu(lambda: ot.copy_(xt))
        row = dict(device="cpu", n=n, threads=threads, hetkern_s=t_h.median_s, numpy_s=t_np.median_s,
                   torch_s=t_t.median_s, copy_s=t_c.median_s, hetkern_gbps=t_h.gbps(nbytes),
                   copy_gbps=t_c.gbps(nbytes))
        rows.append(row)
        print(f"{size_label(n):>6} {t_h.median_s * 1e6:>8.2f}us {t_h.gbps(nbytes):>7.1f} "
              f"{t_np.median_s * 1e6:>8.2f}us {t_t.median_s * 1e6:>8.2f}us {t_c.gbps(nbytes):>9.1f} "
              f"{t_np.median_s / t_h.median_s:>8.2f} {t_t.median_s / t_h.median_s:>8.2f} "
              f"{t_c.median_s / t_h.median_s:>8.2f}")


def bench_gpu(limit: int, rows: list[dict]) -> None:
    import torch

    print(f"\nGPU float32 ({torch.cuda.get_device_name()}); device times from CUDA events")
    print(f"{'n':>6} {'hetkern':>10} {'GB/s':>7} {'torch':>10} {'copy GB/s':>9} {'x torch':>8} {'of copy':>8}")
    for n in sizes_up_to(limit):
        x = torch.randn(n, device="cuda")
        o = torch.empty_like(x)
        nbytes = 2 * x.numel() * 4
        t_h = time_cuda(lambda: hetkern.scale(x, 2.0, out=o))
        t_t = time_cuda(lambda: torch.mul(x, 2.0, out=o))
        t_c = time_cuda(lambda: o.copy_(x))
        rows.append(dict(device="cuda", n=n, hetkern_s=t_h.median_s, torch_s=t_t.median_s,
                         copy_s=t_c.median_s, hetkern_gbps=t_h.gbps(nbytes), copy_gbps=t_c.gbps(nbytes)))
        print(f"{size_label(n):>6} {t_h.median_s * 1e6:>8.2f}us {t_h.gbps(nbytes):>7.0f} "
              f"{t_t.median_s * 1e6:>8.2f}us {t_c.gbps(nbytes):>9.0f} "
              f"{t_t.median_s / t_h.median_s:>8.2f} {t_c.median_s / t_h.median_s:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu-max", default="64M", type=parse_size)
    parser.add_argument("--gpu-max", default="256M", type=parse_size)
    parser.add_argument("--threads", default=None,
                        help="comma-separated CPU thread counts (default: 1 and all cores)")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    rows: list[dict] = []
    if args.cpu_max:
        counts = ([int(t) for t in args.threads.split(",")] if args.threads
                  else sorted({1, os.cpu_count() or 1}))
        for threads in counts:
            bench_cpu(args.cpu_max, threads, rows)
    if gpu_available() and args.gpu_max:
        bench_gpu(args.gpu_max, rows)
    write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
