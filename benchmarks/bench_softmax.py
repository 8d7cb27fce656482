"""hetkern.softmax / log_softmax against torch (CPU and GPU), torch.compile
(GPU, when triton imports) and a NumPy reference formula (CPU).

    python benchmarks/bench_softmax.py [--cpu] [--gpu] [--threads 1,2] [--csv out.csv]

Per shape and dtype: median time per call, GB/s (x read once + out written
once, the minimum traffic) and ratios peer time / hetkern time (> 1 means
hetkern is faster), plus the copy bandwidth (np.copyto / Tensor.copy_)
measured in the same run as the ceiling. CPU contenders run at the same
thread count (hetkern.set_num_threads = torch.set_num_threads); NumPy is
single-threaded, so it is listed only on the 1-thread rows. All calls write
into a preallocated output except torch eager/compiled, which allocate (from
torch's caching allocator on GPU).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import time_cpu, time_cuda, write_csv  # noqa: E402

import hetkern  # noqa: E402

CPU_SHAPES = [(4096, 64), (1024, 1024), (64, 32000), (1, 1 << 20)]
GPU_SHAPES = [(65536, 128), (16384, 1024), (4096, 4096), (4096, 32000), (32, 4096, 4096), (4, 1 << 22)]


def numpy_softmax(x, out, log):
    shifted = x - x.max(axis=-1, keepdims=True)
    if log:
        np.subtract(shifted, np.log(np.exp(shifted).sum(axis=-1, keepdims=True)), out=out)
    else:
        e = np.exp(shifted)
        np.divide(e, e.sum(axis=-1, keepdims=True), out=out)


def shape_label(shape) -> str:
    return "x".join(str(s) for s in shape)


def bench_cpu(threads_list: list[int], rows: list[dict]) -> None:
    import torch

    for log in (False, True):
        name = "log_softmax" if log else "softmax"
        ours = hetkern.log_softmax if log else hetkern.softmax
        theirs = torch.log_softmax if log else torch.softmax
        print(f"\nCPU {name} float32 (hetkern target {hetkern.cpu_target()})")
        print(f"{'shape':>12} {'thr':>3} {'hetkern':>10} {'GB/s':>6} {'torch':>10} {'numpy':>10} "
              f"{'copy GB/s':>9} {'x torch':>7} {'x numpy':>7} {'of copy':>7}")
        for shape in CPU_SHAPES:
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 4
            o = np.empty_like(x)
            xt = torch.from_numpy(x)
            nbytes = 2 * x.nbytes
            for threads in threads_list:
                hetkern.set_num_threads(threads)
                torch.set_num_threads(threads)
                t_h = time_cpu(lambda: ours(x, out=o))
                t_t = time_cpu(lambda: theirs(xt, -1))
                t_np = time_cpu(lambda: numpy_softmax(x, o, log)) if threads == 1 else None
                t_c = time_cpu(lambda: np.copyto(o, x))
                rows.append(dict(device="cpu", op=name, dtype="float32", shape=shape_label(shape),
                                 threads=threads, hetkern_s=t_h.median_s, torch_s=t_t.median_s,
                                 numpy_s=t_np.median_s if t_np else "", copy_s=t_c.median_s,
                                 hetkern_gbps=t_h.gbps(nbytes), copy_gbps=t_c.gbps(nbytes)))
                np_time = f"{t_np.median_s * 1e6:>8.1f}us" if t_np else f"{'-':>10}"
                np_ratio = f"{t_np.median_s / t_h.median_s:>7.2f}" if t_np else f"{'-':>7}"
                print(f"{shape_label(shape):>12} {threads:>3} {t_h.median_s * 1e6:>8.1f}us "
                      f"{t_h.gbps(nbytes):>6.2f} {t_t.median_s * 1e6:>8.1f}us {np_time} "
                      f"{t_c.gbps(nbytes):>9.1f} {t_t.median_s / t_h.median_s:>7.2f} {np_ratio} "
                      f"{t_c.median_s / t_h.median_s:>7.2f}")
    hetkern.set_num_threads(0)


def compiled_or_none(fn):
    try:
        import triton  # noqa: F401
        import torch

        return torch.compile(fn, dynamic=False)
    except Exception:  # no triton / no inductor backend: skip the column
        return None


def bench_gpu(rows: list[dict]) -> None:
    import torch

    print(f"\nGPU ({torch.cuda.get_device_name()}); device times from CUDA events")
    for log in (False, True):
        name = "log_softmax" if log else "softmax"
        ours = hetkern.log_softmax if log else hetkern.softmax
        theirs = torch.log_softmax if log else torch.softmax
        compiled = compiled_or_none(lambda x: theirs(x, -1))
        print(f"\n{name}")
        print(f"{'shape':>14} {'dtype':>8} {'hetkern':>10} {'GB/s':>6} {'torch':>10} {'compile':>10} "
              f"{'copy GB/s':>9} {'x torch':>7} {'x comp':>7} {'of copy':>7}")
        for shape in GPU_SHAPES:
            for dtype in (torch.float32, torch.bfloat16):
                x = torch.randn(shape, device="cuda", dtype=dtype) * 4
                o = torch.empty_like(x)
                nbytes = 2 * x.numel() * x.element_size()
                t_h = time_cuda(lambda: ours(x, out=o))
                t_t = time_cuda(lambda: theirs(x, -1))
                t_k = time_cuda(lambda: compiled(x)) if compiled else None
                t_c = time_cuda(lambda: o.copy_(x))
                dname = str(dtype).removeprefix("torch.")
                rows.append(dict(device="cuda", op=name, dtype=dname, shape=shape_label(shape),
                                 hetkern_s=t_h.median_s, torch_s=t_t.median_s,
                                 compile_s=t_k.median_s if t_k else "", copy_s=t_c.median_s,
                                 hetkern_gbps=t_h.gbps(nbytes), copy_gbps=t_c.gbps(nbytes)))
                k_time = f"{t_k.median_s * 1e6:>8.1f}us" if t_k else f"{'-':>10}"
                k_ratio = f"{t_k.median_s / t_h.median_s:>7.2f}" if t_k else f"{'-':>7}"
                print(f"{shape_label(shape):>14} {dname:>8} {t_h.median_s * 1e6:>8.1f}us "
                      f"{t_h.gbps(nbytes):>6.0f} {t_t.median_s * 1e6:>8.1f}us {k_time} "
                      f"{t_c.gbps(nbytes):>9.0f} {t_t.median_s / t_h.median_s:>7.2f} {k_ratio} "
                      f"{t_c.median_s / t_h.median_s:>7.2f}")
                del x, o
                torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true", help="CPU only (default: both)")
    parser.add_argument("--gpu", action="store_true", help="GPU only (default: both)")
    parser.add_argument("--threads", default=f"1,{os.cpu_count()}",
                        help="CPU thread counts, comma-separated (default 1 and all cores)")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    both = not (args.cpu or args.gpu)
    rows: list[dict] = []
    if args.cpu or both:
        bench_cpu(sorted({int(t) for t in args.threads.split(",")}), rows)
    if args.gpu or both:
        import torch

        if torch.cuda.is_available() and hetkern.built_with_cuda():
            bench_gpu(rows)
        else:
            print("\nGPU: skipped (no CUDA device or CPU-only build)")
    write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
