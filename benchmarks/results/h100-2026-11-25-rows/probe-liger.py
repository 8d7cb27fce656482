import torch, sys
from liger_kernel.transformers import functional as L
def graph_us(fn, n=20):
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n): fn()
    ts = []
    for r in range(12):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        if r >= 2: ts.append(a.elapsed_time(b) * 1000 / n)
    ts.sort(); return ts[len(ts) // 2]
for r, h in [(4096, 4096), (16384, 4096), (1024, 4096), (16384, 8192), (4096, 8192), (256, 16384), (4096, 16384), (65536, 1024), (16384, 2048), (256, 4096), (512, 8192), (1024, 2048)]:
    x = torch.randn(r, h, device="cuda", dtype=torch.bfloat16); w = torch.randn(h, device="cuda", dtype=torch.bfloat16); x2 = torch.randn_like(x)
    for name, fn in [("rmsnorm", lambda: L.liger_rms_norm(x, w, 1e-6)), ("layernorm", lambda: L.liger_layer_norm(x, w, w, 1e-5)),
                     ("fused", lambda: L.liger_fused_add_rms_norm(x, x2, w, 1e-6)), ("copy", lambda: x.clone())]:
        us = graph_us(fn)
        print(f"liger {name:9s} {r:6d} x {h:<6d} {us:8.2f} us {(8 if name == 'fused' else 4) * r * h / us / 1e6:5.2f} TB/s", flush=True)
