"""hetkern.rmsnorm / fused_add_rmsnorm / layernorm against torch (CPU and GPU).

    python benchmarks/bench_norm.py [--threads N] [--no-cpu] [--no-gpu] [--dtypes bfloat16,float32] [--csv out.csv]

For each (tokens, hidden) shape: median time per call, GB/s (bytes read +
written: x and out, plus residual twice for the fused op; weight/bias are
not counted) and the ratio peer time / hetkern time (> 1: hetkern faster).
"copy" is the GB/s of copying x into another array of its size, measured in
the same run, as the bandwidth reference.

Peers: torch eager F.rms_norm and F.layer_norm; for the fused op the eager
two-op sequence ``residual.add_(x); x.copy_(F.rms_norm(residual, ...))``;
on GPU also torch.compile of the same functions when triton imports.
CPU: hetkern and torch run with the same thread count (--threads, default
hetkern.num_threads()), stated in the header. With several threads, set
OMP_WAIT_POLICY=PASSIVE on a machine with few or busy cores: hetkern's and
torch's OpenMP runtimes are separate, and their spinning workers can starve
each other (multi-millisecond stalls). GPU: CUDA-event timings.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import time_cpu, time_cuda, write_csv  # noqa: E402

import hetkern  # noqa: E402

CPU_SHAPES = [(1, 4096), (16, 4096), (128, 4096), (512, 4096), (256, 16384), (2048, 1024)]
GPU_SHAPES = [(1, 4096), (8, 4096), (32, 4096), (128, 4096), (1024, 4096), (4096, 4096),
              (16384, 4096), (16384, 1024), (4096, 8192), (4096, 16384), (16384, 16384)]


def torch_ops(torch, F):
    def rms(x, w, r):
        return F.rms_norm(x, (x.shape[-1],), w, 1e-6)

    def fused(x, w, r):
        r.add_(x)
        x.copy_(F.rms_norm(r, (x.shape[-1],), w, 1e-6))

    def ln(x, w, r):
        return F.layer_norm(x, (x.shape[-1],), w, w, 1e-5)

    return {"rmsnorm": rms, "fused_add_rmsnorm": fused, "layernorm": ln}


def hetkern_ops():
    return {
        "rmsnorm": lambda x, w, r, out: hetkern.rmsnorm(x, w, 1e-6, out=out),
        "fused_add_rmsnorm": lambda x, w, r, out: hetkern.fused_add_rmsnorm(x, r, w, 1e-6),
        "layernorm": lambda x, w, r, out: hetkern.layernorm(x, w, w, 1e-5, out=out),
    }


def traffic(op, x):
    n = x.numel() * x.element_size()
    return 4 * n if op == "fused_add_rmsnorm" else 2 * n


def run(device, shapes, dtypes, timer, compiled, rows):
    import torch
    import torch.nn.functional as F

    peers = torch_ops(torch, F)
    ours = hetkern_ops()
    compiled_peers = {}
    if compiled:
        compiled_peers = {k: torch.compile(v, dynamic=False) for k, v in peers.items()}
    head = f"{'op':<18} {'dtype':<9} {'shape':>13} {'hetkern':>10} {'GB/s':>7} {'torch':>10} {'x torch':>8}"
    head += f" {'compile':>10} {'x comp':>7}" if compiled else ""
    head += f" {'copy GB/s':>9} {'of copy':>7}"
    print(head)
    for dtype_name in dtypes:
        dtype = getattr(torch, dtype_name)
        for tokens, hidden in shapes:
            x = torch.randn(tokens, hidden, device=device, dtype=dtype)
            r = torch.randn_like(x)
            w = torch.randn(hidden, device=device, dtype=dtype)
            out, copy_dst = torch.empty_like(x), torch.empty_like(x)
            t_copy = timer(lambda: copy_dst.copy_(x))
            copy_gbps = t_copy.gbps(2 * x.numel() * x.element_size())
            for op in ours:
                nbytes = traffic(op, x)
                t_h = timer(lambda: ours[op](x, w, r, out))
                t_t = timer(lambda: peers[op](x, w, r))
                row = dict(device=device, op=op, dtype=dtype_name, tokens=tokens, hidden=hidden,
                           hetkern_s=t_h.median_s, torch_s=t_t.median_s,
                           hetkern_gbps=t_h.gbps(nbytes), copy_gbps=copy_gbps)
                line = (f"{op:<18} {dtype_name:<9} {f'{tokens}x{hidden}':>13} "
                        f"{t_h.median_s * 1e6:>8.1f}us {t_h.gbps(nbytes):>7.1f} "
                        f"{t_t.median_s * 1e6:>8.1f}us {t_t.median_s / t_h.median_s:>8.2f}")
                if compiled:
                    t_c = timer(lambda: compiled_peers[op](x, w, r))
                    row["compile_s"] = t_c.median_s
                    line += f" {t_c.median_s * 1e6:>8.1f}us {t_c.median_s / t_h.median_s:>7.2f}"
                line += f" {copy_gbps:>9.1f} {t_h.gbps(nbytes) / copy_gbps:>7.2f}"
                print(line)
                rows.append(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0, help="CPU threads for both (default: hetkern's)")
    parser.add_argument("--no-cpu", action="store_true")
    parser.add_argument("--no-gpu", action="store_true")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    import torch

    dtypes = args.dtypes.split(",")
    rows: list[dict] = []
    if not args.no_cpu:
        threads = args.threads or hetkern.num_threads()
        hetkern.set_num_threads(threads)
        torch.set_num_threads(threads)
        print(f"\nCPU: {threads} thread(s) for hetkern and torch; hetkern target {hetkern.cpu_target()}")
        run("cpu", CPU_SHAPES, dtypes, time_cpu, False, rows)
    if not args.no_gpu and torch.cuda.is_available() and hetkern.built_with_cuda():
        try:
            import triton  # noqa: F401

            compiled = True
        except ImportError:
            compiled = False
        print(f"\nGPU: {torch.cuda.get_device_name()}; torch.compile {'on' if compiled else 'off (no triton)'}")
        run("cuda", GPU_SHAPES, dtypes, time_cuda, compiled, rows)
    write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
