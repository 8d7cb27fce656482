# Reductions over rows (axis=-1), 1 thread, best of 25 calls with out=: µs per call, one line per case.
import sys, time, torch, hetkern
hetkern.set_num_threads(1)
torch.set_num_threads(1)
def best(fn, reps=25):
    fn(); b = 1e9
    for _ in range(reps):
        t = time.perf_counter(); fn(); b = min(b, time.perf_counter() - t)
    return b * 1e6
for dtype in (torch.bfloat16, torch.float32):
    for rows, cols in ((1024, 1024), (4096, 256), (64, 16384)):
        x = torch.randn(rows, cols).to(dtype); y = torch.randn(rows, cols).to(dtype); o = torch.empty(rows, dtype=dtype)
        for op in ("sum", "max", "dot", "norm"):
            f = (lambda: hetkern.dot(x, y, axis=-1, out=o)) if op == "dot" else (lambda: getattr(hetkern, op)(x, axis=-1, out=o))
            print(f"{op}_rows {str(dtype)[6:]} {rows}x{cols} {best(f):.2f}", flush=True)
