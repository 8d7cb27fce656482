# Liger (Triton) norms under CUDA graph replay, 20 calls per graph, same method as the microbench.
import torch
from liger_kernel.transformers import functional as LF

def graph_us(fn, calls=20):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls): fn()
    g.replay(); torch.cuda.synchronize()
    batch = 1
    while True:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(batch): g.replay()
        b.record(); b.synchronize()
        if a.elapsed_time(b) > 2 or batch > 4096: break
        batch *= 2
    ts = []
    for _ in range(9):
        a.record()
        for _ in range(batch): g.replay()
        b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / batch / calls)
    ts.sort(); return ts[len(ts) // 2]

for h in (2048, 4096, 8192):
    for t in (1, 8, 32, 128):
        x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16); r = torch.randn_like(x)
        w = torch.randn(h, device="cuda", dtype=torch.bfloat16)
        print(f"liger {t}x{h} rms {graph_us(lambda: LF.liger_rms_norm(x, w, 1e-6)):.3f} "
              f"fused {graph_us(lambda: LF.liger_fused_add_rms_norm(x, r, w, 1e-6)):.3f} "
              f"ln {graph_us(lambda: LF.liger_layer_norm(x, w, w, 1e-5)):.3f}", flush=True)
for t, h, ops in ((16384, 8192, ("rms", "fused")), (4096, 4096, ("ln",))):
    x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16); r = torch.randn_like(x)
    w = torch.randn(h, device="cuda", dtype=torch.bfloat16)
    f = {"rms": lambda: LF.liger_rms_norm(x, w, 1e-6), "fused": lambda: LF.liger_fused_add_rms_norm(x, r, w, 1e-6),
         "ln": lambda: LF.liger_layer_norm(x, w, w, 1e-5)}
    print(f"liger {t}x{h} " + " ".join(f"{o} {graph_us(f[o]):.2f}" for o in ops), flush=True)
