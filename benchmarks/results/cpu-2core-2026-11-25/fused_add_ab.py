import time, torch, hetkern, sys
torch.set_num_threads(1); hetkern.set_num_threads(1)
def t(fn, n=100):
    best=1e9
    for _ in range(9):
        s=time.perf_counter()
        for _ in range(n): fn()
        best=min(best,(time.perf_counter()-s)/n)
    return best
for rows, cols in [(1,4096),(32,4096),(128,4096),(1024,4096)]:
  for dt in [torch.float32, torch.bfloat16, torch.float16]:
    x=torch.randn(rows,cols).to(dt); w=torch.randn(cols).to(dt); r=torch.randn(rows,cols).to(dt)
    a=t(lambda: hetkern.fused_add_rmsnorm(x, r, w, 1e-6))
    print(f"{rows}x{cols} {str(dt):15} {a/x.numel()*1e9:.3f}")
