"""A/B of two builds of libhetkern in one process, calls alternating: the
quant norms (and rmsnorm, unchanged, as the control) at 1 thread on
in-cache and DRAM-sized rows, or at THREADS threads, each best of 30 calls,
the best of 5 rounds; the quant outputs of both builds compared bit for bit.
    python ab.py OLD.so NEW.so [THREADS] [ROWSxHIDDEN,...]"""
import time, torch, tvm_ffi, sys
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
shapes = [tuple(map(int, s.split("x"))) for s in sys.argv[4].split(",")] if len(sys.argv) > 4 else [(32, 4096), (1024, 4096)]
torch.set_num_threads(threads)
old = tvm_ffi.load_module(sys.argv[1]); new = tvm_ffi.load_module(sys.argv[2])
for m in (old, new): m.set_num_threads(threads)
def t(f, reps=30):
    f(); best = 1e9
    for _ in range(reps):
        s = time.perf_counter(); f(); best = min(best, time.perf_counter() - s)
    return best
print(f"{threads} thread(s)")
print(f"{'op':24s} {'dtype':9s} {'shape':10s} {'old us':>8s} {'new us':>8s} {'new/old':>7s}")
for op in ("rmsnorm", "rmsnorm_quant", "fused_add_rmsnorm_quant", "layernorm_quant"):
  for dt in (torch.bfloat16, torch.float16, torch.float32):
    for rows, h in shapes:
        x = torch.randn(rows, h, dtype=dt); w = torch.randn(h, dtype=dt); b = torch.randn(h, dtype=dt)
        r0 = torch.randn(rows, h, dtype=dt); r = r0.clone(); out = torch.empty_like(x)
        o8 = torch.empty(rows, h, dtype=torch.float8_e4m3fn); sc = torch.tensor(0.37, dtype=torch.float32)
        def call(m):
            if op == "rmsnorm": return lambda: m.rmsnorm(out, x, w, 1e-6)
            if op == "rmsnorm_quant": return lambda: m.rmsnorm_quant(o8, x, w, sc, 1e-6)
            if op == "fused_add_rmsnorm_quant": return lambda: m.fused_add_rmsnorm_quant(o8, x, r, w, sc, 1e-6)
            return lambda: m.layernorm_quant(o8, x, w, sc, b, 1e-6)
        a = []; bb = []
        for _ in range(5):
            a.append(t(call(old))); bb.append(t(call(new)))
        # same bits from both libraries
        if op != "rmsnorm":
            r.copy_(r0); call(old)(); ref = o8.view(torch.uint8).clone(); r.copy_(r0); call(new)()
            assert torch.equal(ref, o8.view(torch.uint8)), op
        print(f"{op:24s} {str(dt)[6:]:9s} {rows}x{h:<5d} {min(a)*1e6:8.1f} {min(bb)*1e6:8.1f} {min(bb)/min(a):7.2f}", flush=True)
