"""A workload for compute-sanitizer over the row kernels (norms, softmax, rope).

Calls every norm op (the fp8 quant ones too), softmax/log_softmax and rope in
bfloat16, float16 and float32 at shapes that reach each launch shape:
- one row and decode batches;
- 4 packs a thread at 16384 values;
- the several-blocks grids of 600-20000 rows;
- cluster rows of 32000-201088 values (rows of 32000 on 8 and 4 blocks, float32 ones on 2;
  16-block float32 rows of 5, 6 and 8 packs);
- many rows past one SM: the shared kernel on clusters (float32 90000 on 2 blocks, 160000 on
  4; 16-bit 160000 on 2);
- rope: one token, more tokens than the grid holds blocks (each block
  pipelining its tokens), odd head sizes and misaligned starts (the
  element-wise kernel), no key, float32 caches, out-of-range positions (CUDA);
- odd sizes.
Each result is compared with torch's, so a call that wrote the wrong place
fails here too. The bits are checked by tests/test_norm*.py and test_softmax.py.

It took 8 s under memcheck and 146 s under racecheck on an H100, where the pytest
selections over the same kernels ran past 95-200 s without a summary (stop
57). Since then the norm family alone (243 calls) took about 150-160 s under
memcheck and racecheck together, and norm with rope ran past 170 s under
racecheck alone (stop 66): give racecheck one family a call, or 300 s. Stop 58 made it for stop 56's kernels (its copy is in
benchmarks/results/h100-2026-12-06-stop58/). Run it through
`SANITIZE=rows tools/gpu-check sanitize`, or alone:
`compute-sanitizer --tool memcheck python3 tools/sanitize-rows.py [cuda|cpu] [norm|softmax|rope|NORM-OP,...]`
(the second argument: only that family's calls, or only those norm ops' calls).
"""
import sys

import torch

import hetkern

dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
FAMILIES = ["norm", "softmax", "rope"]
NORM_OPS = ["rmsnorm", "gemma_rmsnorm", "layernorm", "rmsnorm_quant", "layernorm_quant", "fused_add_rmsnorm",
            "gemma_fused_add_rmsnorm", "fused_add_rmsnorm_quant"]
# Families, or norm ops (the norm family's calls of those ops only: racecheck over
# all 243 norm calls needs about 300 s), each argument a comma-separated list.
names = [name for arg in sys.argv[2:] for name in arg.split(",")] or FAMILIES
if not set(names) <= set(FAMILIES + NORM_OPS):
    raise SystemExit(f"families ({', '.join(FAMILIES)}) or norm ops ({', '.join(NORM_OPS)}), not {' '.join(names)}")
norm_ops = set(NORM_OPS) if "norm" in names else set(names) & set(NORM_OPS)  # empty: no norm calls
torch.manual_seed(0)
NORM_SHAPES = [(1, 4096), (128, 4096), (1, 16384), (7, 16384), (600, 16384), (2048, 16384), (3000, 4096),
               (20000, 1024), (5, 300)]
# (tokens, query heads, key heads or None, head size, rotary dims, element offset)
ROPE_CASES = [(1, 32, 8, 128, 128, 0), (5000, 7, 3, 128, 128, 0), (3000, 5, None, 128, 64, 0),
              (9, 4, 2, 34, 32, 0), (9, 4, 2, 128, 128, 1)]
SOFTMAX_SHAPES = [(1, 32000), (20, 32000), (40, 32000), (4096, 1024), (2048, 4096), (512, 16384), (1, 151936),
                  (2, 180000), (1, 201088), (140, 90000), (70, 160000), (9, 777)]
calls = 0
# One e4m3 step: 2^-9 among subnormals, 1/8 of the value among normals (a
# reference computed from other roundings may round to the next code).
E4M3_STEP = (2.0**-9, 0.125)


SCALE = 0.25  # the quant ops' scale


def fp8(y):
    """torch's e4m3 of clamp(y / SCALE): the quant ops' reference."""
    return (y / SCALE).clamp(-448, 448).to(torch.float8_e4m3fn).float()


def q8(x):
    return torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device)


def close(name, got, want, tol, rel=0.0):
    """|got - want| <= tol + rel |want| everywhere (rel: fp8 codes one e4m3 step apart)."""
    global calls
    calls += 1
    err = (got.double() - want.double()).abs() - rel * want.double().abs()
    worst = err.max().item() if got.numel() else 0.0
    if not worst <= tol:
        raise SystemExit(f"{name}: error {worst} past {tol} + {rel} |want|")


scale = torch.tensor(SCALE, dtype=torch.float32, device=dev)
for dtype in (torch.bfloat16, torch.float16, torch.float32):
    tol = {torch.bfloat16: 0.05, torch.float16: 0.01, torch.float32: 1e-4}[dtype]
    for rows, h in NORM_SHAPES if norm_ops else []:
        tag = f"{dtype} {rows}x{h}"
        x = torch.randn(rows, h, dtype=dtype, device=dev)
        w = torch.rand(h, dtype=dtype, device=dev) + 0.5
        b = torch.randn(h, dtype=dtype, device=dev)
        r = torch.randn_like(x)
        ref_rms = torch.nn.functional.rms_norm(x.float(), (h,), w.float(), 1e-6)
        ref_ln = torch.nn.functional.layer_norm(x.float(), (h,), w.float(), b.float(), 1e-5)
        if "rmsnorm" in norm_ops:
            close(f"rmsnorm {tag}", hetkern.rmsnorm(x, w, 1e-6), ref_rms, tol * 8)
        if "gemma_rmsnorm" in norm_ops:
            close(f"gemma_rmsnorm {tag}", hetkern.gemma_rmsnorm(x, w - 1, 1e-6),
                  torch.nn.functional.rms_norm(x.float(), (h,), (w - 1).float() + 1, 1e-6), tol * 8)
        if "layernorm" in norm_ops:
            close(f"layernorm {tag}", hetkern.layernorm(x, w, b, 1e-5), ref_ln, tol * 8)
        if "rmsnorm_quant" in norm_ops:
            close(f"rmsnorm_quant {tag}", hetkern.rmsnorm_quant(q8(x), x, w, scale, 1e-6).float(), fp8(ref_rms),
                  *E4M3_STEP)
        if "layernorm_quant" in norm_ops:
            close(f"layernorm_quant {tag}", hetkern.layernorm_quant(q8(x), x, w, scale, b, 1e-5).float(),
                  fp8(ref_ln), *E4M3_STEP)
        if "fused_add_rmsnorm" in norm_ops:
            xs, rs = x.clone(), r.clone()
            hetkern.fused_add_rmsnorm(xs, rs, w, 1e-6)
            close(f"fused_add_rmsnorm {tag}", rs, x.float() + r.float(), tol * 4)
            close(f"fused_add_rmsnorm out {tag}", xs,
                  torch.nn.functional.rms_norm(rs.float(), (h,), w.float(), 1e-6), tol * 8)
        if "gemma_fused_add_rmsnorm" in norm_ops:
            xs, rs = x.clone(), r.clone()
            hetkern.gemma_fused_add_rmsnorm(xs, rs, w - 1, 1e-6)
            close(f"gemma_fused_add_rmsnorm {tag}", rs, x.float() + r.float(), tol * 4)
        if "fused_add_rmsnorm_quant" in norm_ops:
            rs = r.clone()
            q = hetkern.fused_add_rmsnorm_quant(q8(x), x, rs, w, scale, 1e-6)[0]
            close(f"fused_add_rmsnorm_quant {tag}", q.float(),
                  fp8(torch.nn.functional.rms_norm(x.float() + r.float(), (h,), w.float(), 1e-6)),
                  *E4M3_STEP)
    for rows, cols in SOFTMAX_SHAPES if "softmax" in names else []:
        x = torch.randn(rows, cols, dtype=dtype, device=dev) * 4
        close(f"softmax {dtype} {rows}x{cols}", hetkern.softmax(x), torch.softmax(x.float(), -1), tol)
        close(f"log_softmax {dtype} {rows}x{cols}", hetkern.log_softmax(x), torch.log_softmax(x.float(), -1),
              tol * 16)
    for tokens, heads, kv_heads, head_size, rot_dim, offset in ROPE_CASES if "rope" in names else []:
        for is_neox in (True, False):
            for cache_dtype in dict.fromkeys((dtype, torch.float32)):  # each once, in this order
                tag = f"rope {dtype} {tokens}x{heads}+{kv_heads}x{head_size} rot {rot_dim} neox {is_neox}"
                positions = torch.randint(0, 4096, (tokens,), device=dev)
                if dev == "cuda":  # out of range: skipped, left unchanged (the CPU raises)
                    positions[::41] = 4096 + 7
                inv_freq = 1.0 / 10000.0 ** (torch.arange(0, rot_dim, 2, device=dev) / rot_dim)
                freqs = torch.outer(torch.arange(4096, device=dev, dtype=torch.float32), inv_freq)
                cache = torch.cat((freqs.cos(), freqs.sin()), -1).to(cache_dtype)
                q = torch.randn(tokens * heads * head_size + offset, dtype=dtype, device=dev)[offset:]
                q = q.view(tokens, heads, head_size)
                k = None if kv_heads is None else torch.randn(tokens, kv_heads, head_size, dtype=dtype, device=dev)
                want = [t.float().clone() for t in (q, k) if t is not None]
                valid = positions < 4096
                cos, sin = cache.float()[positions[valid]].unsqueeze(1).chunk(2, -1)
                for t in want:
                    x = t[valid]
                    rot = x[..., :rot_dim]
                    x1, x2 = rot.chunk(2, -1) if is_neox else (rot[..., ::2], rot[..., 1::2])
                    o1, o2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
                    x[..., :rot_dim] = torch.cat((o1, o2), -1) if is_neox else torch.stack((o1, o2), -1).flatten(-2)
                    t[valid] = x
                hetkern.rope(positions, q, k, head_size, cache, is_neox)
                for got, exp in zip((q, k), want):
                    close(tag, got, exp, tol * 8)
if dev == "cuda":
    torch.cuda.synchronize()
print(f"{calls} calls checked on {dev}")
