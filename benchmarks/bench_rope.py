"""hetkern.rope against the torch reference (vLLM's forward_native) at LLM
shapes: 32 query heads, 8 kv heads, head_size 128, full rotary, NeoX layout.

    python benchmarks/bench_rope.py [--tokens 1,16,128,1024,8192] [--dtypes bfloat16,float32]
                                    [--threads 1,0] [--no-cpu] [--csv out.csv]

For each token count: median time per call, GB/s (query and key read and
written, plus the cos/sin rows and positions read), and ratios (peer time /
hetkern time, so > 1 means hetkern is faster), plus the fraction of the copy
bandwidth measured in the same run (copying query and key: the same bytes
read and written). CPU: every contender runs at the same thread count
(hetkern.set_num_threads and torch.set_num_threads; 0 = all cores). GPU:
torch eager, and torch.compile of the reference when triton imports. The
reference returns new tensors (as forward_native does); hetkern works in place.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import time_cpu, time_cuda, write_csv  # noqa: E402

import torch  # noqa: E402

import hetkern  # noqa: E402

NUM_HEADS, NUM_KV_HEADS, HEAD_SIZE, MAX_POSITION = 32, 8, 128, 16384


def forward_native(positions, query, key, head_size, cos_sin_cache, is_neox):
    """vLLM's RotaryEmbedding.forward_native (in the query's dtype)."""
    positions = positions.flatten()
    num_tokens = positions.shape[0]
    cos, sin = cos_sin_cache.index_select(0, positions).chunk(2, dim=-1)
    rot_dim = cos_sin_cache.shape[1]

    def apply(x):
        shape = x.shape
        x = x.view(num_tokens, -1, head_size)
        x_rot, x_pass = x[..., :rot_dim], x[..., rot_dim:]
        c, s = cos.unsqueeze(-2).to(x.dtype), sin.unsqueeze(-2).to(x.dtype)
        if is_neox:
            x1, x2 = torch.chunk(x_rot, 2, dim=-1)
        else:
            x1, x2 = x_rot[..., ::2], x_rot[..., 1::2]
        o1, o2 = x1 * c - x2 * s, x2 * c + x1 * s
        rotated = torch.cat((o1, o2), -1) if is_neox else torch.stack((o1, o2), -1).flatten(-2)
        return torch.cat((rotated, x_pass), dim=-1).reshape(shape)

    return apply(query), apply(key)


def make(num_tokens, dtype, device):
    g = torch.Generator().manual_seed(num_tokens)
    positions = torch.randint(0, MAX_POSITION, (num_tokens,), generator=g)
    query = torch.randn(num_tokens, NUM_HEADS * HEAD_SIZE, generator=g).to(dtype)
    key = torch.randn(num_tokens, NUM_KV_HEADS * HEAD_SIZE, generator=g).to(dtype)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HEAD_SIZE, 2, dtype=torch.float) / HEAD_SIZE))
    freqs = torch.outer(torch.arange(MAX_POSITION, dtype=torch.float), inv_freq)
    cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(dtype)
    return [t.to(device) for t in (positions, query, key, cache)]


def traffic_bytes(positions, query, key, cache):
    qk = query.numel() * query.element_size() + key.numel() * key.element_size()
    return 2 * qk + positions.numel() * cache.shape[1] * cache.element_size() + positions.numel() * 8


def try_compile():
    try:
        import triton  # noqa: F401
    except ImportError:
        return None
    return torch.compile(forward_native, dynamic=False)


def bench_cpu(tokens, dtypes, thread_counts, rows):
    # Read before torch.set_num_threads, which changes OpenMP's default.
    all_cores = hetkern.num_threads()
    for threads in thread_counts:
        n = threads or all_cores
        hetkern.set_num_threads(n)
        torch.set_num_threads(n)
        for dtype in dtypes:
            print(f"\nCPU {dtype} ({n} thread(s) each; hetkern target {hetkern.cpu_target()}); "
                  f"{NUM_HEADS}/{NUM_KV_HEADS} heads x {HEAD_SIZE}")
            print(f"{'tokens':>6} {'hetkern':>10} {'GB/s':>7} {'torch':>10} {'copy GB/s':>9} "
                  f"{'x torch':>8} {'of copy':>8}")
            for t in tokens:
                positions, query, key, cache = make(t, dtype, "cpu")
                q2, k2 = query.clone(), key.clone()
                nbytes = traffic_bytes(positions, query, key, cache)
                t_h = time_cpu(lambda: hetkern.rope(positions, query, key, HEAD_SIZE, cache, True))
                t_t = time_cpu(lambda: forward_native(positions, query, key, HEAD_SIZE, cache, True))
                t_c = time_cpu(lambda: (q2.copy_(query), k2.copy_(key)))
                copy_gbps = t_c.gbps(2 * (query.nbytes + key.nbytes))
                rows.append(dict(device="cpu", threads=n, dtype=str(dtype), tokens=t,
                                 hetkern_s=t_h.median_s, torch_s=t_t.median_s, copy_s=t_c.median_s,
                                 hetkern_gbps=t_h.gbps(nbytes), copy_gbps=copy_gbps))
                print(f"{t:>6} {t_h.median_s * 1e6:>8.1f}us {t_h.gbps(nbytes):>7.1f} "
                      f"{t_t.median_s * 1e6:>8.1f}us {copy_gbps:>9.1f} "
                      f"{t_t.median_s / t_h.median_s:>8.2f} {t_h.gbps(nbytes) / copy_gbps:>8.2f}")
    hetkern.set_num_threads(0)


def bench_gpu(tokens, dtypes, rows):
    compiled = try_compile()
    print(f"\nGPU ({torch.cuda.get_device_name()}); CUDA-event times; torch.compile: "
          f"{'yes' if compiled else 'no (triton not importable)'}")
    for dtype in dtypes:
        print(f"\n{dtype}: {NUM_HEADS}/{NUM_KV_HEADS} heads x {HEAD_SIZE}")
        print(f"{'tokens':>6} {'hetkern':>10} {'GB/s':>7} {'eager':>10} {'compiled':>10} "
              f"{'copy GB/s':>9} {'x eager':>8} {'x comp.':>8} {'of copy':>8}")
        for t in tokens:
            positions, query, key, cache = make(t, dtype, "cuda")
            q2, k2 = query.clone(), key.clone()
            nbytes = traffic_bytes(positions, query, key, cache)
            t_h = time_cuda(lambda: hetkern.rope(positions, query, key, HEAD_SIZE, cache, True))
            t_e = time_cuda(lambda: forward_native(positions, query, key, HEAD_SIZE, cache, True))
            t_x = (time_cuda(lambda: compiled(positions, query, key, HEAD_SIZE, cache, True))
                   if compiled else None)
            t_c = time_cuda(lambda: (q2.copy_(query), k2.copy_(key)))
            copy_gbps = t_c.gbps(2 * (query.nbytes + key.nbytes))
            rows.append(dict(device="cuda", dtype=str(dtype), tokens=t, hetkern_s=t_h.median_s,
                             torch_s=t_e.median_s, compiled_s=t_x.median_s if t_x else "",
                             copy_s=t_c.median_s, hetkern_gbps=t_h.gbps(nbytes), copy_gbps=copy_gbps))
            comp = f"{t_x.median_s * 1e6:>8.1f}us" if t_x else f"{'-':>10}"
            x_comp = f"{t_x.median_s / t_h.median_s:>8.2f}" if t_x else f"{'-':>8}"
            print(f"{t:>6} {t_h.median_s * 1e6:>8.1f}us {t_h.gbps(nbytes):>7.0f} "
                  f"{t_e.median_s * 1e6:>8.1f}us {comp} {copy_gbps:>9.0f} "
                  f"{t_e.median_s / t_h.median_s:>8.2f} {x_comp} {t_h.gbps(nbytes) / copy_gbps:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="1,16,128,1024,8192")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--threads", default="1,0", help="CPU thread counts; 0 = all cores")
    parser.add_argument("--no-cpu", action="store_true")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args()
    tokens = [int(t) for t in args.tokens.split(",")]
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    rows: list[dict] = []
    if not args.no_cpu:
        bench_cpu(tokens, dtypes, [int(n) for n in args.threads.split(",")], rows)
    if torch.cuda.is_available() and hetkern.built_with_cuda():
        bench_gpu(tokens, dtypes, rows)
    write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
