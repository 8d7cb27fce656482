"""hetkern activations and gated activations against torch (and NumPy for exp
and tanh) on CPU and torch eager / torch.compile on GPU.

    python benchmarks/bench_activation.py [--threads 1] [--cpu-max 4M] [--tokens 1,64,512] [--csv out.csv]

Times are medians per call; GB/s counts bytes read + written; "x torch" is
torch time / hetkern time (> 1: hetkern faster); "of copy" is hetkern's
bandwidth over a plain copy of the same bytes measured in the same run. CPU
contenders run on the same number of threads (--threads, default 1).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import parse_size, size_label, time_cpu, time_cuda, write_csv  # noqa: E402

import hetkern  # noqa: E402




def unary_ops(torch):
    """name -> (hetkern(x, out), torch eager(x, o), torch functional(x) for
    torch.compile, NumPy(x, o) or None). torch writes into o where it has an
    out= form; F.silu/F.gelu have none and allocate."""
    F = torch.nn.functional
    gelu_tanh = lambda x: F.gelu(x, approximate="tanh")  # noqa: E731
    return {
        "relu": (hetkern.relu, lambda x, o: torch.clamp_min(x, 0, out=o), F.relu, None),
        "sigmoid": (hetkern.sigmoid, lambda x, o: torch.sigmoid(x, out=o), torch.sigmoid, None),
        "silu": (hetkern.silu, lambda x, o: F.silu(x), F.silu, None),
        "gelu": (hetkern.gelu, lambda x, o: F.gelu(x), F.gelu, None),
        "gelu_tanh": (lambda x, out: hetkern.gelu(x, "tanh", out=out), lambda x, o: gelu_tanh(x),
                      gelu_tanh, None),
        "tanh": (hetkern.tanh, lambda x, o: torch.tanh(x, out=o), torch.tanh, lambda x, o: np.tanh(x, out=o)),
        "exp": (hetkern.exp, lambda x, o: torch.exp(x, out=o), torch.exp, lambda x, o: np.exp(x, out=o)),
    }


def gated_ops(torch):
    F = torch.nn.functional

    def split(fn):
        def run(x):
            d = x.shape[-1] // 2
            return fn(x[..., :d]) * x[..., d:]
        return run

    return {
        "silu_and_mul": (hetkern.silu_and_mul, split(F.silu)),
        "gelu_and_mul": (hetkern.gelu_and_mul, split(F.gelu)),
        "gelu_tanh_and_mul": (lambda x, out: hetkern.gelu_and_mul(x, "tanh", out=out),
                              split(lambda v: F.gelu(v, approximate="tanh"))),
    }


def bench_cpu(args, rows):
    import torch

    torch.set_num_threads(args.threads)
    hetkern.set_num_threads(args.threads)
    print(f"\nCPU, {args.threads} thread(s) each; hetkern target {hetkern.cpu_target()}")
    for dtype in (torch.float32, torch.bfloat16):
        print(f"\n{str(dtype):15} {'n':>6} {'hetkern':>10} {'GB/s':>6} {'torch':>10} {'numpy':>10} "
              f"{'x torch':>7} {'x numpy':>7} {'of copy':>7}")
        n = 1 << 16
        while n <= args.cpu_max:
            x = (torch.randn(n) * 3).to(dtype)
            o = torch.empty_like(x)
            nbytes = 2 * x.numel() * x.element_size()
            t_copy = time_cpu(lambda: o.copy_(x))
            for name, (ours, theirs, _, np_fn) in unary_ops(torch).items():
                t_h = time_cpu(lambda: ours(x, out=o))
                t_t = time_cpu(lambda: theirs(x, o))
                t_n = None
                if np_fn is not None and dtype == torch.float32:
                    xn, on = x.numpy(), o.numpy()
                    t_n = time_cpu(lambda: np_fn(xn, on))
                rows.append(dict(device="cpu", threads=args.threads, op=name, dtype=str(dtype), n=n,
                                 hetkern_s=t_h.median_s, torch_s=t_t.median_s,
                                 numpy_s=t_n.median_s if t_n else "", copy_s=t_copy.median_s))
                print(f"{name:15} {size_label(n):>6} {t_h.median_s * 1e6:>8.1f}us {t_h.gbps(nbytes):>6.1f} "
                      f"{t_t.median_s * 1e6:>8.1f}us "
                      f"{(f'{t_n.median_s * 1e6:8.1f}us') if t_n else '         -'} "
                      f"{t_t.median_s / t_h.median_s:>7.2f} "
                      f"{(f'{t_n.median_s / t_h.median_s:7.2f}') if t_n else '      -'} "
                      f"{t_copy.median_s / t_h.median_s:>7.2f}")
            n *= 4
        print(f"\n{'gated ' + str(dtype):22} {'tokens x d':>12} {'hetkern':>10} {'GB/s':>6} {'torch':>10} "
              f"{'x torch':>7} {'of copy':>7}")
        for tokens in args.tokens:
            for d in (4096, 14336):
                x = (torch.randn(tokens, 2 * d) * 3).to(dtype)
                o = torch.empty(tokens, d, dtype=dtype)
                nbytes = (x.numel() + o.numel()) * x.element_size()
                src = torch.empty(x.numel() * 3 // 4, dtype=dtype)
                dst = torch.empty_like(src)
                t_copy = time_cpu(lambda: dst.copy_(src))  # same bytes moved
                for name, (ours, theirs) in gated_ops(torch).items():
                    t_h = time_cpu(lambda: ours(x, out=o))
                    t_t = time_cpu(lambda: theirs(x))
                    rows.append(dict(device="cpu", threads=args.threads, op=name, dtype=str(dtype),
                                     tokens=tokens, d=d, hetkern_s=t_h.median_s, torch_s=t_t.median_s,
                                     copy_s=t_copy.median_s))
                    print(f"{name:22} {f'{tokens}x{d}':>12} {t_h.median_s * 1e6:>8.1f}us "
                          f"{t_h.gbps(nbytes):>6.1f} {t_t.median_s * 1e6:>8.1f}us "
                          f"{t_t.median_s / t_h.median_s:>7.2f} {t_copy.median_s / t_h.median_s:>7.2f}")
    hetkern.set_num_threads(0)


def bench_gpu(args, rows):
    import torch

    compiled = None
    try:
        import triton  # noqa: F401

        compiled = True
    except ImportError:
        pass
    print(f"\nGPU ({torch.cuda.get_device_name()}); CUDA-event times"
          + ("" if compiled is not None else "; torch.compile skipped (no triton)"))
    for dtype in (torch.float32, torch.bfloat16):
        print(f"\n{str(dtype):15} {'n':>6} {'hetkern':>10} {'GB/s':>6} {'torch':>10} {'compiled':>10} "
              f"{'x torch':>7} {'of copy':>7}")
        for n in (1 << 20, 1 << 24, 1 << 27):
            x = (torch.randn(n, device="cuda") * 3).to(dtype)
            o = torch.empty_like(x)
            nbytes = 2 * x.numel() * x.element_size()
            t_copy = time_cuda(lambda: o.copy_(x))
            for name, (ours, theirs, functional, _) in unary_ops(torch).items():
                t_h = time_cuda(lambda: ours(x, out=o))
                t_t = time_cuda(lambda: theirs(x, o))
                t_c = None
                if compiled is not None:
                    fn = torch.compile(functional)
                    t_c = time_cuda(lambda: fn(x))
                rows.append(dict(device="cuda", op=name, dtype=str(dtype), n=n, hetkern_s=t_h.median_s,
                                 torch_s=t_t.median_s, compiled_s=t_c.median_s if t_c else "",
                                 copy_s=t_copy.median_s))
                print(f"{name:15} {size_label(n):>6} {t_h.median_s * 1e6:>8.1f}us {t_h.gbps(nbytes):>6.0f} "
                      f"{t_t.median_s * 1e6:>8.1f}us "
                      f"{(f'{t_c.median_s * 1e6:8.1f}us') if t_c else '         -'} "
                      f"{t_t.median_s / t_h.median_s:>7.2f} {t_copy.median_s / t_h.median_s:>7.2f}")
        print(f"\n{'gated ' + str(dtype):22} {'tokens x d':>12} {'hetkern':>10} {'GB/s':>6} {'torch':>10} "
              f"{'compiled':>10} {'x torch':>7} {'of copy':>7}")
        for tokens in (1, 16, 256, 4096):
            for d in (4096, 11008, 14336):
                x = (torch.randn(tokens, 2 * d, device="cuda") * 3).to(dtype)
                o = torch.empty(tokens, d, device="cuda", dtype=dtype)
                nbytes = (x.numel() + o.numel()) * x.element_size()
                src = torch.empty(x.numel() * 3 // 4, device="cuda", dtype=dtype)
                dst = torch.empty_like(src)
                t_copy = time_cuda(lambda: dst.copy_(src))
                for name, (ours, theirs) in gated_ops(torch).items():
                    t_h = time_cuda(lambda: ours(x, out=o))
                    t_t = time_cuda(lambda: theirs(x))
                    t_c = time_cuda(lambda f=torch.compile(theirs): f(x)) if compiled is not None else None
                    rows.append(dict(device="cuda", op=name, dtype=str(dtype), tokens=tokens, d=d,
                                     hetkern_s=t_h.median_s, torch_s=t_t.median_s,
                                     compiled_s=t_c.median_s if t_c else "", copy_s=t_copy.median_s))
                    print(f"{name:22} {f'{tokens}x{d}':>12} {t_h.median_s * 1e6:>8.1f}us "
                          f"{t_h.gbps(nbytes):>6.0f} {t_t.median_s * 1e6:>8.1f}us "
                          f"{(f'{t_c.median_s * 1e6:8.1f}us') if t_c else '         -'} "
                          f"{t_t.median_s / t_h.median_s:>7.2f} {t_copy.median_s / t_h.median_s:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cpu-max", type=parse_size, default=1 << 22)
    parser.add_argument("--tokens", type=lambda s: [int(t) for t in s.split(",")], default=[1, 64, 512])
    parser.add_argument("--no-cpu", action="store_true")
    parser.add_argument("--csv")
    args = parser.parse_args()
    rows: list[dict] = []
    if not args.no_cpu:
        bench_cpu(args, rows)
    import torch

    if torch.cuda.is_available() and hetkern.built_with_cuda():
        bench_gpu(args, rows)
    write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
