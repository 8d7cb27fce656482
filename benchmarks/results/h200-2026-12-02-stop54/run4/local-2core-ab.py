import sys, time, torch, numpy as np
import hetkern
def t(f, reps):
    f(); best=1e9
    for _ in range(9):
        s=time.perf_counter()
        for _ in range(reps): f()
        best=min(best,(time.perf_counter()-s)/reps)
    return best*1e6
torch.set_num_threads(2)
out=[]
for op in ["exp","tanh","sigmoid","silu","gelu"]:
    for dt in [torch.float32, torch.bfloat16, torch.float16]:
        for n in [4096, 8192]:
            x=torch.randn(n, dtype=dt); o=torch.empty_like(x)
            f=getattr(hetkern, op)
            h=t(lambda: f(x, out=o), 3000)
            tf={"exp":torch.exp,"tanh":torch.tanh,"sigmoid":torch.sigmoid,"silu":torch.nn.functional.silu,
                "gelu":torch.nn.functional.gelu,"gelu_tanh":lambda v: torch.nn.functional.gelu(v, approximate="tanh")}[op]
            tt=t(lambda: tf(x), 3000)
            out.append((op,str(dt).split('.')[1],n,h,tt))
for r in out: print(sys.argv[1], "%s %s %d %.3f %.3f" % r)
