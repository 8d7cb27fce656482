import time, numpy as np, torch, hetkern
def t(fn, n=2000):
    best=1e9
    for _ in range(5):
        s=time.perf_counter()
        for _ in range(n): fn()
        best=min(best,(time.perf_counter()-s)/n)
    return best*1e6
for n in [1024, 16384]:
    x=np.random.randn(n).astype(np.float32); o=np.empty(n, np.float16)
    xt=torch.from_numpy(x); ot=torch.empty(n,dtype=torch.bfloat16); ot16=torch.from_numpy(o)
    print(n, "np->f16 %.2f"%t(lambda: hetkern.cast(x,"float16",out=o)), "torch->bf16 %.2f"%t(lambda: hetkern.cast(xt,"bfloat16",out=ot)),
      "torch->f16 %.2f"%t(lambda: hetkern.cast(xt,"float16",out=ot16)), "scale %.2f"%t(lambda: hetkern.scale(x,2.0,out=x)),
      "torch copy_ %.2f"%t(lambda: ot.copy_(xt)))
