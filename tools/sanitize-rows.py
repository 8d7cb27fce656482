"""A workload for compute-sanitizer over the row kernels (norms and softmax).

Calls every norm op (the fp8 quant ones too) and softmax/log_softmax in
bfloat16, float16 and float32 at shapes that reach each launch shape:
- one row and decode batches;
- 4 packs a thread at 16384 values;
- the several-blocks grids of 600-20000 rows;
- cluster rows of 32000-201088 values (16-block float32 rows of 5, 6 and 8 packs);
- odd sizes.
Each result is compared with torch's, so a call that wrote the wrong place
fails here too. The bits are checked by tests/test_norm*.py and test_softmax.py.

It took 8 s under memcheck and 146 s under racecheck on an H100, where the pytest
selections over the same kernels ran past 95-200 s without a summary (stop
57). Stop 58 made it for stop 56's kernels (its copy is in
benchmarks/results/h100-2026-12-06-stop58/). Run it through
`SANITIZE=rows tools/gpu-check sanitize`, or alone:
`compute-sanitizer --tool memcheck python3 tools/sanitize-rows.py [cuda|cpu] [norm|softmax]`
(the second argument: only that family's calls).
"""
import sys

import torch

import hetkern

dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
families = sys.argv[2:] or ["norm", "softmax"]
if not set(families) <= {"norm", "softmax"}:
    raise SystemExit(f"families: norm or softmax, not {' '.join(families)}")
torch.manual_seed(0)
NORM_SHAPES = [(1, 4096), (128, 4096), (1, 16384), (7, 16384), (600, 16384), (2048, 16384), (3000, 4096),
               (20000, 1024), (5, 300)]
SOFTMAX_SHAPES = [(1, 32000), (40, 32000), (4096, 1024), (2048, 4096), (512, 16384), (1, 151936),
                  (2, 180000), (1, 201088), (9, 777)]
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
    for rows, h in NORM_SHAPES if "norm" in families else []:
        tag = f"{dtype} {rows}x{h}"
        x = torch.randn(rows, h, dtype=dtype, device=dev)
        w = torch.rand(h, dtype=dtype, device=dev) + 0.5
        b = torch.randn(h, dtype=dtype, device=dev)
        r = torch.randn_like(x)
        ref_rms = torch.nn.functional.rms_norm(x.float(), (h,), w.float(), 1e-6)
        ref_ln = torch.nn.functional.layer_norm(x.float(), (h,), w.float(), b.float(), 1e-5)
        close(f"rmsnorm {tag}", hetkern.rmsnorm(x, w, 1e-6), ref_rms, tol * 8)
        close(f"gemma_rmsnorm {tag}", hetkern.gemma_rmsnorm(x, w - 1, 1e-6),
              torch.nn.functional.rms_norm(x.float(), (h,), (w - 1).float() + 1, 1e-6), tol * 8)
        close(f"layernorm {tag}", hetkern.layernorm(x, w, b, 1e-5), ref_ln, tol * 8)
        close(f"rmsnorm_quant {tag}", hetkern.rmsnorm_quant(q8(x), x, w, scale, 1e-6).float(), fp8(ref_rms),
              *E4M3_STEP)
        close(f"layernorm_quant {tag}", hetkern.layernorm_quant(q8(x), x, w, scale, b, 1e-5).float(), fp8(ref_ln),
              *E4M3_STEP)
        xs, rs = x.clone(), r.clone()
        hetkern.fused_add_rmsnorm(xs, rs, w, 1e-6)
        close(f"fused_add_rmsnorm {tag}", rs, x.float() + r.float(), tol * 4)
        close(f"fused_add_rmsnorm out {tag}", xs,
              torch.nn.functional.rms_norm(rs.float(), (h,), w.float(), 1e-6), tol * 8)
        xs, rs = x.clone(), r.clone()
        hetkern.gemma_fused_add_rmsnorm(xs, rs, w - 1, 1e-6)
        close(f"gemma_fused_add_rmsnorm {tag}", rs, x.float() + r.float(), tol * 4)
        rs = r.clone()
        q = hetkern.fused_add_rmsnorm_quant(q8(x), x, rs, w, scale, 1e-6)[0]
        close(f"fused_add_rmsnorm_quant {tag}", q.float(),
              fp8(torch.nn.functional.rms_norm(x.float() + r.float(), (h,), w.float(), 1e-6)),
              *E4M3_STEP)
    for rows, cols in SOFTMAX_SHAPES if "softmax" in families else []:
        x = torch.randn(rows, cols, dtype=dtype, device=dev) * 4
        close(f"softmax {dtype} {rows}x{cols}", hetkern.softmax(x), torch.softmax(x.float(), -1), tol)
        close(f"log_softmax {dtype} {rows}x{cols}", hetkern.log_softmax(x), torch.log_softmax(x.float(), -1),
              tol * 16)
if dev == "cuda":
    torch.cuda.synchronize()
print(f"{calls} calls checked on {dev}")
