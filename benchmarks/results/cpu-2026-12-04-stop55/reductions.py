import time, numpy as np, torch, hetkern, sys
def best(f, reps=15):
    ts=[]
    for _ in range(reps):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return min(ts)*1e3
for threads in (1,2):
    torch.set_num_threads(threads); hetkern.set_num_threads(threads) if hasattr(hetkern,'set_num_threads') else None
    for n in (1<<16, 1<<20, 1<<22, 1<<24):
        x=torch.randn(n); y=torch.randn(n)
        xb=x.bfloat16()
        r = [best(lambda: hetkern.dot(x,y)), best(lambda: torch.dot(x,y)),
             best(lambda: hetkern.norm(xb, axis=None)), best(lambda: torch.linalg.vector_norm(xb)),
             best(lambda: hetkern.sum(x, axis=None)), best(lambda: torch.sum(x))]
        print(threads, n, " ".join(f"{v:8.3f}" for v in r))
