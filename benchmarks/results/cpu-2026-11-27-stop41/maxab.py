# max of float16/bfloat16 over many inputs (every bit pattern, specials, sizes, rows, threads): results to .npz.
import sys, numpy as np, torch, hetkern
out = {}
g = torch.Generator().manual_seed(1)
all_bits = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)
for dt in [torch.bfloat16, torch.float16]:
    name = str(dt)[6:]
    pats = all_bits.view(dt)
    for threads in [1, 2]:
        hetkern.set_num_threads(threads)
        # every single pattern alone, and against -inf rows
        out[f"{name}_{threads}_each"] = hetkern.max(pats.view(-1, 1)).view(torch.int16).numpy().copy()
        for n in [1, 2, 31, 32, 33, 63, 64, 65, 4096, 4099, 70000, 1 << 20]:
            for trial in range(6):
                idx = torch.randint(0, 65536, (n,), generator=g)
                x = pats[idx]
                if trial >= 3:  # mostly finite, few specials
                    x = (torch.randn(n, generator=g) * 100).to(dt)
                    if trial == 4: x[torch.randint(0, n, (1,), generator=g)] = float("nan")
                    if trial == 5: x = -x.abs()
                out[f"{name}_{threads}_{n}_{trial}_whole"] = hetkern.max(x).view(torch.int16).numpy().copy()
                if n % 4 == 0 and n >= 64:
                    out[f"{name}_{threads}_{n}_{trial}_rows"] = hetkern.max(x.view(4, -1)).view(torch.int16).numpy().copy()
                    out[f"{name}_{threads}_{n}_{trial}_whole4"] = hetkern.max(x.view(4, -1), axis=None).view(torch.int16).numpy().copy()
np.savez(sys.argv[1], **out)
print(len(out), "results")
