import time, numpy as np, torch, hetkern, sys
N=int(sys.argv[1]); torch.set_num_threads(N); hetkern.set_num_threads(N)
def t(fn, n=200):
    best=1e9
    for _ in range(5):
        s=time.perf_counter()
        for _ in range(n): fn()
        best=min(best,(time.perf_counter()-s)/n)
    return best
for dt in [torch.float32, torch.bfloat16, torch.float16]:
  for rows, cols in [(4096,64),(2048,128),(256,1024)]:
    x=torch.randn(rows,cols).to(dt); o=torch.empty_like(x)
    a=t(lambda: hetkern.softmax(x, out=o)); b=t(lambda: torch.softmax(x,-1,out=o) if False else torch._softmax(x,-1,False))
    print(f"{str(dt):15} {rows}x{cols}: hetkern {a*1e6:7.1f}us ({a/x.numel()*1e9:.3f} ns/el) torch {b*1e6:7.1f}us  x{b/a:.2f}")
