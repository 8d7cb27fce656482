import time, torch, hetkern
torch.set_num_threads(1)
def t(f, reps=200):
    for _ in range(10): f()
    ts=[]
    for _ in range(7):
        t0=time.perf_counter()
        for _ in range(reps): f()
        ts.append((time.perf_counter()-t0)/reps)
    return sorted(ts)[3]*1e6
for shape in ((256, 1024), (1024, 1024)):
    x = torch.randn(*shape); o = torch.empty(shape[0])
    print(shape, "sum %.1f  norm %.1f  max %.1f  torch-norm %.1f us" % (t(lambda: hetkern.sum(x, axis=-1, out=o)), t(lambda: hetkern.norm(x, axis=-1, out=o)), t(lambda: hetkern.max(x, axis=-1, out=o)), t(lambda: torch.linalg.vector_norm(x, dim=-1, out=o))))
