import sys, numpy as np, torch, hetkern
out = {}
g = torch.Generator().manual_seed(7)
shapes = [(1,), (1000,), (4097,), (65537,), (3, 1024), (5, 2048), (7, 4096), (2, 8193), (1, 1 << 20), (9, 16385), (4, 100000), (3, 3000)]
for dt in [torch.float32, torch.float64, torch.bfloat16, torch.float16]:
    for shape in shapes:
        x = (torch.randn(*shape, generator=g) * 3).to(dt); y = (torch.randn(*shape, generator=g)).to(dt)
        for t in (1, 2):
            hetkern.set_num_threads(t)
            for op in ("sum", "max", "norm", "dot"):
                for axis in (None, -1):
                    r = hetkern.dot(x, y, axis=axis) if op == "dot" else getattr(hetkern, op)(x, axis=axis)
                    out[f"{dt}-{shape}-{t}-{op}-{axis}"] = r.double().numpy()
np.savez(sys.argv[1], **out); print(len(out))
