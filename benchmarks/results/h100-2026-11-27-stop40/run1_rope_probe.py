"""Stop 40: why Liger's rope times 6-20 % faster in the peers table than in
graph_probe. Times hetkern and Liger (graph replay) on fresh data in both
orders, after the buffers have been rotated many times in place, and with
Liger on its own copy; prints the values' state each time."""
import sys
import torch
from hetkern.bench import harness, rope

def stats(t):
    f = t.float()
    return (f"maxabs={f.abs().max().item():.3g} nan={torch.isnan(f).sum().item()} "
            f"inf={torch.isinf(f).sum().item()} zero={(f == 0).float().mean().item():.3f} "
            f"sub={((f != 0) & (f.abs() < 1.18e-38)).sum().item()}")

def t(fn):
    return harness.time_cuda_graph(fn, samples=9, max_total_s=1.0).median_s * 1e6

for tokens in map(int, sys.argv[1].split(",")):
    c = rope._rope(tokens, "bfloat16", "cuda")
    q = None
    import gc
    h, l = c["hetkern"], c["liger"]
    # the query tensor the contenders share: hetkern.rope's first tensor argument
    qref = h.__closure__[0].cell_contents[1] if h.__closure__ else None
    print(f"tokens {tokens} fresh: {stats(qref)}", flush=True)
    print(f"  hetkern {t(h):8.2f}  liger {t(l):8.2f}  state {stats(qref)}", flush=True)
    print(f"  liger {t(l):8.2f}  hetkern {t(h):8.2f}  state {stats(qref)}", flush=True)
    for _ in range(20000 if tokens <= 4096 else 5000):
        h()
    torch.cuda.synchronize()
    print(f"  after many in-place calls: {stats(qref)}", flush=True)
    print(f"  hetkern {t(h):8.2f}  liger {t(l):8.2f}", flush=True)
    c2 = rope._rope(tokens, "bfloat16", "cuda")  # Liger on its own fresh data
    print(f"  own-data liger {t(c2['liger']):8.2f} hetkern {t(c2['hetkern']):8.2f}", flush=True)
    # nudge: the same shape with values reset each sample is not graph-timable; instead
    # copy time for reference
    cp = harness.copy_fn("cuda", rope._bytes(tokens, "bfloat16"))
    print(f"  copy {t(cp):8.2f}", flush=True)
    del c, c2, h, l, qref
    torch.cuda.empty_cache()
