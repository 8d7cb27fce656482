# Writes softmax/log_softmax outputs of many shapes to one .npz (for bit comparison between builds)
import sys, numpy as np, torch, hetkern
out = {}
g = torch.Generator().manual_seed(5)
shapes = [(4096, 64), (513, 128), (37, 1024), (9, 1025), (6, 33), (5, 17), (13, 1), (8, 7), (11, 300), (4, 4096), (3, 5000), (2, 40000)]
for dt in [torch.float32, torch.float64, torch.bfloat16, torch.float16]:
    for rows, cols in shapes:
        x = (torch.randn(rows, cols, generator=g) * 8).to(dt)
        x.view(-1)[::97] = -float("inf")
        if rows > 3: x[2, cols // 2] = float("nan"); x[3, :] = -float("inf")
        for log in (False, True):
            f = hetkern.log_softmax if log else hetkern.softmax
            for t in (1, 2):
                hetkern.set_num_threads(t)
                y = f(x); key = f"{dt}-{rows}x{cols}-{log}-{t}"
                out[key] = y.view(torch.int16 if dt.itemsize == 2 else (torch.int32 if dt.itemsize == 4 else torch.int64)).numpy()
                z = x.clone(); f(z, out=z)  # in place
                out[key + "-inplace"] = z.view(y.dtype).view(torch.int16 if dt.itemsize == 2 else (torch.int32 if dt.itemsize == 4 else torch.int64)).numpy()
                # strided rows: a view of wider rows
                w = torch.zeros(rows, cols + 5, dtype=dt); w[:, :cols] = x
                o = torch.full((rows, cols + 3), 7.0, dtype=dt)
                f(w[:, :cols], out=o[:, :cols])
                out[key + "-strided"] = o.view(torch.int16 if dt.itemsize == 2 else (torch.int32 if dt.itemsize == 4 else torch.int64)).numpy()
np.savez(sys.argv[1], **out)
print(len(out), "arrays")
