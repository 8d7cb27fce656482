# Writes every norm op's bfloat16 results over many rows to an .npz (run once per library, then compare).
import sys, numpy as np, torch, hetkern
torch.manual_seed(0)
out = {}
def rows_of(kind, rows, h, offset):
    base = torch.randn(rows * h + offset) * 3
    if kind == "tiny": base = base * 1e-36
    if kind == "mixed":
        base[::7] *= 1e-38; base[::11] = 0
    if kind == "special":
        base[5 % base.numel()] = float("nan"); base[-1] = float("inf")
    if kind == "bigspread":
        base = base * torch.exp(torch.randn_like(base) * 20).clamp(max=1e30)
    return base.to(torch.bfloat16)[offset:].view(rows, h)
k = 0
for h in [1, 15, 16, 31, 32, 33, 47, 64, 65, 100, 127, 129, 255, 1000, 4096, 4099]:
    for rows in [1, 3, 8, 17]:
        for kind in ["normal", "tiny", "mixed", "special", "bigspread"]:
            for offset in [0, 1]:
                x = rows_of(kind, rows, h, offset)
                w = (torch.randn(h) * 2).to(torch.bfloat16)
                if kind == "mixed": w[::3] *= 1e-30
                b = torch.randn(h).to(torch.bfloat16)
                r = rows_of("normal", rows, h, 0)
                res = {
                  "rms": hetkern.rmsnorm(x, w, 1e-6),
                  "gemma": hetkern.gemma_rmsnorm(x, w, 1e-6),
                  "ln": hetkern.layernorm(x, w, b, 1e-5),
                  "ln_nob": hetkern.layernorm(x, w, None, 1e-5),
                }
                xx, rr = x.clone(), r.clone(); hetkern.fused_add_rmsnorm(xx, rr, w, 1e-6); res["fa_x"], res["fa_r"] = xx, rr
                xx, rr = x.clone(), r.clone(); hetkern.gemma_fused_add_rmsnorm(xx, rr, w, 1e-6); res["gfa_x"], res["gfa_r"] = xx, rr
                for name, t in res.items():
                    out[f"{k}_{name}"] = t.view(torch.int16).numpy().copy()
                k += 1
np.savez(sys.argv[1], **out)
print(k, "cases", len(out), "arrays")
