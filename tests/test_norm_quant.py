"""The fp8-quantising norms (docs/norm.md): rmsnorm_quant,
fused_add_rmsnorm_quant, layernorm_quant write float8_e4m3fn bits of
clamp(y / scale, -448, 448), bit-equal to torch's `.to(torch.float8_e4m3fn)`.

The conversion itself is tested exactly, through the ops: with x a row of
ones, rmsnorm's inverse RMS is exactly 1 and y is exactly the weight, so
rmsnorm_quant(out, ones, values, scale=1) is e4m3(clamp(values)) for any
float32 (or float64) values. The values are every float32 within a few ulps
of every e4m3 value and rounding midpoint (normals, subnormals, the clamp
bound, 0, inf, NaN, both signs) and a million random bit patterns, on every
Highway target this CPU runs and on CUDA. The norms are then compared with
float64 references: bit-equal except where the reference lies within 2^-18
(relative) of an e4m3 midpoint, where the float32 y may round either way.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hetkern
from conftest import CPU_TARGETS, HAVE_CUDA, assert_bitwise_equal, bytes_of, requires_cuda
from opinfo import FP8, quantize_e4m3

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def targets(device):
    """Every Highway target on the CPU (each forced in turn); CUDA once."""
    if device != "cpu":
        yield None
        return
    try:
        for target in CPU_TARGETS:
            hetkern.set_cpu_target(target)
            yield target
    finally:
        hetkern.set_cpu_target(None)


def e4m3_boundary_values() -> torch.Tensor:
    """float32 values within 3 ulps of every e4m3fn value and of every
    midpoint between neighbours (both signs), plus the clamp's and the
    conversion's edges, inf and NaN."""
    codes = torch.arange(0, 127, dtype=torch.uint8).view(FP8).float()  # 0 .. 448
    finite = codes.double()
    mids = (finite[:-1] + finite[1:]) / 2
    centers = torch.cat([finite, mids, torch.tensor([464.0, 480.0, 1e4, 2.0**-10, 2.0**-11])])
    bits = centers.float().view(torch.int32)
    ulps = torch.arange(-3, 4, dtype=torch.int32)
    near = (bits[:, None] + ulps[None, :]).flatten()
    near = near[near >= 0]  # below +0 the pattern would be a negative NaN
    values = near.view(torch.float32)
    specials = torch.tensor([float("inf"), float("nan"), 3.4e38, 1e-45, 0.0])
    values = torch.cat([values, specials])
    return torch.cat([values, -values])


def random_float32_bits(n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-2**31, 2**31, (n,), generator=g, dtype=torch.int64).to(torch.int32).view(torch.float32)


def convert_through_rmsnorm_quant(values, x_dtype, device, scale=1.0):
    """e4m3(clamp(values / scale)) computed by the library: rmsnorm_quant of a
    row of ones (inverse RMS exactly 1) with `values` as the weight."""
    n = values.numel()
    w_dtype = torch.float64 if x_dtype == torch.float64 else torch.float32
    x = torch.ones(1, n, dtype=x_dtype, device=device)
    out = torch.empty(1, n, dtype=FP8, device=device)
    scale = torch.tensor([scale], dtype=torch.float32, device=device)
    hetkern.rmsnorm_quant(out, x, values.to(w_dtype).to(device), scale, 1e-30)
    return out[0]


def assert_e4m3_equal(actual, expected):
    """Bits equal; NaN codes (0x7f, 0xff) match each other, as the sign of a
    NaN produced by arithmetic is not specified."""
    a = actual.cpu().view(torch.uint8)
    e = expected.cpu().view(torch.uint8)
    both_nan = ((a & 0x7F) == 0x7F) & ((e & 0x7F) == 0x7F)
    same = (a == e) | both_nan
    if not bool(same.all()):
        bad = (~same).nonzero().flatten()[:5]
        raise AssertionError(f"{int((~same).sum())} of {a.numel()} differ at {bad.tolist()}: "
                             f"got {a[bad].tolist()}, expected {e[bad].tolist()}")


# ---- the conversion ----------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_dtype", DTYPES, ids=lambda d: str(d)[6:])
def test_conversion_is_torchs_near_every_e4m3_boundary(device, x_dtype):
    values = e4m3_boundary_values()
    if x_dtype == torch.float64:
        # float64 y goes through float32 as torch converts it; add values
        # between float32 neighbours so that the double rounding shows.
        values = torch.cat([values.double(), values.double() * (1 + 2.0**-30)])
    expected = quantize_e4m3(values)
    for _ in targets(device):
        assert_e4m3_equal(convert_through_rmsnorm_quant(values, x_dtype, device), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_conversion_is_torchs_on_random_bits(device):
    values = random_float32_bits(1 << 20)
    expected = quantize_e4m3(values)
    for _ in targets(device):
        assert_e4m3_equal(convert_through_rmsnorm_quant(values, torch.float32, device), expected)


# Scales for the division: ordinary ones, and negative ones and ones beyond
# [2^-64, 2^64], where the CUDA kernels divide in float64 instead of
# correcting a reciprocal's product (src/cuda/quant_scale.cuh), 0, inf and
# NaN included.
DIVISION_SCALES = [3.0, 0.1, 448 / 7, -1 / 3, 1.7 * 2.0**-20, -1.3 * 2.0**30, 2.0**-64, 2.0**64,
                   1e-30, 1e30, 1e-40, 0.0, float("inf"), float("nan")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scale", DIVISION_SCALES, ids=lambda s: f"{s:g}")
def test_division_by_scale_is_torchs(device, scale):
    """The quotient is torch's float32 y / scale, correctly rounded: y chosen
    within 3 ulps of scale times every e4m3 value and midpoint (the quotients
    whose last bits decide the rounding), plus random bit patterns."""
    s = torch.tensor(scale, dtype=torch.float32)
    centers = (e4m3_boundary_values().double() * s.double()).float()
    centers = centers[centers.isfinite()].view(torch.int32)
    near = (centers[:, None] + torch.arange(-3, 4, dtype=torch.int32)[None, :]).flatten()
    values = torch.cat([near.view(torch.float32), e4m3_boundary_values(), random_float32_bits(1 << 18, seed=7)])
    expected = quantize_e4m3(values / s)
    for _ in targets(device):
        assert_e4m3_equal(convert_through_rmsnorm_quant(values, torch.float32, device, scale), expected)


def test_boundary_values_cover_every_code():
    codes = quantize_e4m3(e4m3_boundary_values()).view(torch.uint8).unique()
    assert codes.numel() == 256  # every e4m3fn code, both NaNs included


def test_the_conversion_is_plain_torch_conversion_within_the_clamp():
    # The reference: torch's own conversion, which the clamp keeps in range.
    v = torch.tensor([1.0, 300.0, 1.5 * 2.0**-10, 460.0, -0.0, 1e-10, -2.0, 17.0])
    assert quantize_e4m3(v).view(torch.uint8).tolist() == [56, 121, 1, 126, 128, 0, 192, 88]  # 17: a tie, to even (16)


# ---- the norms against float64 references ----------------------------------

def assert_quant_matches(actual, v):
    """actual == e4m3(clamp(v)) except where v is within 2^-18 of a midpoint
    (float32 y may round either way there), where a neighbour is accepted;
    those must be rare."""
    v = v.cpu().double()
    expected = quantize_e4m3(v)
    a = actual.cpu().view(torch.uint8)
    low = quantize_e4m3(v * (1 - 2.0**-18)).view(torch.uint8)
    high = quantize_e4m3(v * (1 + 2.0**-18)).view(torch.uint8)
    e = expected.view(torch.uint8)
    nan = ((a & 0x7F) == 0x7F) & ((e & 0x7F) == 0x7F)
    exact = (a == e) | nan
    ok = exact | (a == low) | (a == high)
    if not bool(ok.all()):
        bad = (~ok).nonzero()[:5].tolist()
        raise AssertionError(f"{int((~ok).sum())} of {a.numel()} differ at {bad}")
    assert int((~exact).sum()) <= max(2, a.numel() // 1000)


def rms_y(x, w, eps, residual=None):
    v = x.double() if residual is None else x.double() + residual.double()
    return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps) * w.double()


def make(shape, dtype, device, seed=0, spread=2):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(shape, generator=g, dtype=torch.float64)
    base *= torch.exp2(torch.randint(-spread, spread + 1, shape, generator=g).double())
    return base.to(dtype).to(device)


# (2, 8196) and (2, 32768): rows a whole SM's block holds in registers on CUDA
# (float32 and 16-bit respectively; src/cuda/norm.cu, RowGrid::kWholeSm).
# (16, 300): a call of >= 8 rows, whose CPU rows are proven free of NaN
# (test_cpu_rows_proven_free_of_nan).
SHAPES = [(1, 1), (3, 7), (4, 33), (2, 64), (5, 127), (2, 256), (3, 1025), (2, 2048), (2, 4096),
          (1, 16384), (2, 8196), (2, 32768), (2, 3, 17), (1, 65536 + 7), (16, 300), (0, 8)]
SCALES = [1.0, 0.0173, 2.0**-20, 1e-30, 3e4, 1e30]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_rmsnorm_quant(device, dtype, shape):
    x, w = make(shape, dtype, device, 1), make(shape[-1:], dtype, device, 2, 1)
    for target in targets(device):
        for scale in SCALES:
            s = torch.tensor([scale], device=device)
            out = torch.full(shape, 0x55, dtype=torch.uint8, device=device).view(FP8)
            x_before = x.clone()
            assert hetkern.rmsnorm_quant(out, x, w, s, 1e-6) is out
            assert_bitwise_equal(x, x_before)
            assert_quant_matches(out, rms_y(x, w, 1e-6) / scale)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fused_add_rmsnorm_quant(device, dtype, shape):
    x, r, w = make(shape, dtype, device, 1), make(shape, dtype, device, 3), make(shape[-1:], dtype, device, 2, 1)
    s = torch.tensor([0.0173], device=device)
    for target in targets(device):
        out = torch.empty(shape, dtype=FP8, device=device)
        mine_x, mine_r = x.clone(), r.clone()
        got = hetkern.fused_add_rmsnorm_quant(out, mine_x, mine_r, w, s, 1e-6)
        assert got[0] is out and got[1] is mine_r
        assert_bitwise_equal(mine_x, x)  # x is only read (FlashInfer's definition)
        assert_bitwise_equal(mine_r, x + r)  # residual = x + residual, rounded once
        # The unrounded sum feeds the variance and y.
        assert_quant_matches(out, rms_y(x, w, 1e-6, residual=r) / 0.0173)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (4, 33), (2, 256), (3, 1025), (2, 4096),
                                   (2, 8196), (2, 32768), (16, 300), (0, 8)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("with_bias", [True, False])
def test_layernorm_quant(device, dtype, shape, with_bias):
    x, w = make(shape, dtype, device, 1), make(shape[-1:], dtype, device, 2, 1)
    b = make(shape[-1:], dtype, device, 4, 1) if with_bias else None
    s = torch.tensor([0.0173], device=device)
    y = torch.nn.functional.layer_norm(x.double(), shape[-1:], w.double(),
                                       None if b is None else b.double(), 1e-5)
    for target in targets(device):
        out = torch.empty(shape, dtype=FP8, device=device)
        hetkern.layernorm_quant(out, x, w, s, b, 1e-5)
        # float32 mean and variance: y is off by ~sqrt(H) ulps near 0 (as
        # layernorm's own tolerance, docs/norm.md), so one e4m3 step is allowed.
        torch.testing.assert_close(out.cpu().double(), quantize_e4m3(y.cpu() / 0.0173).double(),
                                   atol=2.0**-9, rtol=2.0**-3)


@requires_cuda
@pytest.mark.parametrize("op", ["rmsnorm_quant", "layernorm_quant"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=lambda d: str(d)[6:])
def test_cuda_calls_of_many_row_tiles(op, dtype):
    """Calls of more than 64 row tiles an SM, where the quant ops without a
    residual take several tiles a block (src/cuda/norm.cu, LaunchRows): every
    row has the bits a call of a few rows gives it, the last partial tile
    included."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = 8 * 64 * sms + 8 * 3 + 5  # rows of 64 values: one warp each, 8 a tile
    x, w = make((rows, 64), dtype, "cuda", 1), make((64,), dtype, "cuda", 2, 1)
    s = torch.tensor([0.0173], device="cuda")

    def call(out, rows_of_x):
        if op == "rmsnorm_quant":
            return hetkern.rmsnorm_quant(out, rows_of_x, w, s, 1e-6)
        return hetkern.layernorm_quant(out, rows_of_x, w, s, None, 1e-5)

    whole = torch.empty(rows, 64, dtype=FP8, device="cuda")
    call(whole, x)
    for start in (0, rows // 2 + 3, rows - 37):
        part = torch.empty(37, 64, dtype=FP8, device="cuda")
        call(part, x[start:start + 37])
        assert_bitwise_equal(whole[start:start + 37], part)
    if op == "rmsnorm_quant":
        assert_quant_matches(whole, rms_y(x, w, 1e-6) / 0.0173)


@requires_cuda
@pytest.mark.parametrize("op", ["rmsnorm_quant", "fused_add_rmsnorm_quant", "layernorm_quant"])
@pytest.mark.parametrize("hidden", [1536, 2048, 3072, 4096, 5120, 8192, 12288, 16384, 32768])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=lambda d: str(d)[6:])
def test_cuda_row_bits_independent_of_row_count(op, hidden, dtype):
    """Rows give the same fp8 bits in a call of 4096 (many blocks an SM,
    where layernorm_quant splits rows of 2 packs a thread over half the
    threads, and stages rows of 3 packs a thread (H 12288) through shared
    memory: src/cuda/norm.cu, kSplitRows and kStagedRows; and splits the
    rows over a whole SM, float32 16384 and bfloat16 32768, over half the
    threads: kSplitWholeSmRows; 3 to 32 warps of partials here) and in calls
    of up to 128 (one block an SM, the row's own thread shape). A different reduction order moves the mean or the
    variance by an ulp in many rows, and that moves some of 4096 * hidden
    values across an e4m3 rounding boundary."""
    # Chunks of at most one row tile an SM take the one-block-an-SM grid.
    rows = 4096
    chunk = min(128, torch.cuda.get_device_properties(0).multi_processor_count)
    x, r = make((rows, hidden), dtype, "cuda", hidden), make((rows, hidden), dtype, "cuda", hidden + 1)
    w, b = make((hidden,), dtype, "cuda", 2, 1), make((hidden,), dtype, "cuda", 4, 1)
    s = torch.tensor([0.0173], device="cuda")

    def run(x, r):
        out = torch.empty(x.shape, dtype=FP8, device="cuda")
        if op == "rmsnorm_quant":
            hetkern.rmsnorm_quant(out, x, w, s, 1e-6)
        elif op == "fused_add_rmsnorm_quant":
            hetkern.fused_add_rmsnorm_quant(out, x, r, w, s, 1e-6)
        else:
            hetkern.layernorm_quant(out, x, w, s, b, 1e-5)
        return out

    whole = run(x, r.clone())
    chunks = torch.cat([run(x[i:i + chunk], r[i:i + chunk].clone()) for i in range(0, rows, chunk)])
    assert_bitwise_equal(whole, chunks)


@requires_cuda
@pytest.mark.parametrize("hidden", [4096, 12288, 16384])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("with_bias", [True, False])
def test_cuda_layernorm_quant_of_many_rows(hidden, dtype, with_bias):
    """Calls of several blocks an SM, whose kernels read the weight (and the
    bias) in the output pass, with and without a bias: every row has the
    bits a call of one block an SM gives it, and the values match the
    reference as test_layernorm_quant's do."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows, chunk = 3 * sms + 5, min(128, sms)
    x, w = make((rows, hidden), dtype, "cuda", 5), make((hidden,), dtype, "cuda", 2, 1)
    b = make((hidden,), dtype, "cuda", 4, 1) if with_bias else None
    s = torch.tensor([0.0173], device="cuda")

    def run(x):
        out = torch.empty(x.shape, dtype=FP8, device="cuda")
        hetkern.layernorm_quant(out, x, w, s, b, 1e-5)
        return out

    whole = run(x)
    assert_bitwise_equal(whole, torch.cat([run(x[i:i + chunk]) for i in range(0, rows, chunk)]))
    y = torch.nn.functional.layer_norm(x.double(), (hidden,), w.double(), None if b is None else b.double(), 1e-5)
    torch.testing.assert_close(whole.cpu().double(), quantize_e4m3(y.cpu() / 0.0173).double(),
                               atol=2.0**-9, rtol=2.0**-3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=lambda d: str(d)[6:])
def test_float32_weight_with_16bit_x(device, dtype):
    x, w = make((3, 520), dtype, device, 1), make((520,), torch.float32, device, 2, 1)
    out = torch.empty(3, 520, dtype=FP8, device=device)
    for target in targets(device):
        hetkern.rmsnorm_quant(out, x, w, torch.tensor([0.05], device=device), 1e-6)
        assert_quant_matches(out, rms_y(x, w, 1e-6) / 0.05)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["rmsnorm_quant", "fused_add_rmsnorm_quant", "layernorm_quant"])
def test_strided_misaligned_rows_and_uint8_out(device, op):
    # x = a[:, 1:1+H] (misaligned, row stride 3H), out a strided uint8 view.
    rows, hidden = 5, 136
    a = make((rows, 3 * hidden), torch.bfloat16, device, 1)
    x = a[:, 1:1 + hidden]
    w = make((hidden,), torch.bfloat16, device, 2, 1)
    s = torch.tensor([0.03], device=device)
    big = torch.full((rows, 2 * hidden + 3), 0x33, dtype=torch.uint8, device=device)
    out = big[:, 3:3 + hidden]
    dense = torch.empty(rows, hidden, dtype=FP8, device=device)
    r1, r2 = make((rows, hidden), torch.bfloat16, device, 3), None
    for target in targets(device):
        if op == "rmsnorm_quant":
            hetkern.rmsnorm_quant(out, x, w, s)
            hetkern.rmsnorm_quant(dense, x.contiguous(), w, s)
        elif op == "fused_add_rmsnorm_quant":
            r2 = r1.clone()
            hetkern.fused_add_rmsnorm_quant(out, x, r1.clone(), w, s)
            hetkern.fused_add_rmsnorm_quant(dense, x.contiguous(), r2, w, s)
        else:
            hetkern.layernorm_quant(out, x, w, s, w)
            hetkern.layernorm_quant(dense, x.contiguous(), w, s, w)
        assert torch.equal(out, dense.view(torch.uint8))
        assert bool((big[:, :3] == 0x33).all()) and bool((big[:, 3 + hidden:] == 0x33).all())


@pytest.mark.parametrize("device", DEVICES)
def test_nan_and_saturation(device):
    x = torch.tensor([[1.0, -1.0, 2.0, -2.0], [1.0, float("nan"), 3.0, 4.0],
                      [float("inf"), 1.0, 1.0, 1.0]], device=device)
    w = torch.ones(4, device=device)
    out = torch.empty(3, 4, dtype=FP8, device=device)
    for target in targets(device):
        hetkern.rmsnorm_quant(out, x, w, torch.tensor([1e-3], device=device))
        bits = out.cpu().view(torch.uint8)
        assert bits[0].tolist() == [126, 254, 126, 254]  # +-448: saturated, never NaN
        assert bool(((bits[1] & 0x7F) == 0x7F).all())    # a NaN row stays NaN
        # inf: inv_rms is 0, inf * 0 is NaN; the finite entries give 0.
        assert (bits[2, 0] & 0x7F) == 0x7F and bits[2, 1:].tolist() == [0, 0, 0]


def rows_with_nonfinite_statistics(dtype, hidden=300):
    """16 rows: ordinary ones between rows whose statistics are not finite
    (a NaN, an infinity, squares that overflow, zeros: with an eps that is
    0 in float32 their inverse RMS is inf), a row of large values and one of
    tiny values (whose squares underflow in float32, so that eps decides y).
    The test's scales make y / scale saturate (1e-30) or divide by 0."""
    rows = make((16, hidden), torch.float64, "cpu", 5)
    huge = torch.finfo(dtype).max / 4
    rows[4, 7] = float("nan")
    rows[5, 299] = float("-inf")
    rows[6] = rows[6].sign() * huge
    rows[7] = 0.0
    rows[9] *= 1e3
    rows[11] *= torch.finfo(dtype).tiny
    rows[13, :2] = torch.tensor([huge, -huge])
    return rows.to(dtype)


@pytest.mark.parametrize("op", ["rmsnorm_quant", "fused_add_rmsnorm_quant", "layernorm_quant"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
def test_cpu_rows_proven_free_of_nan(op, dtype):
    """Calls of >= 8 rows with finite parameters and a finite, nonzero scale
    prove rows with finite statistics free of NaN and convert them without
    the NaN select (src/cpu/norm.cc, WithNaNProof). Every row of such a call
    must equal the same row in a call of its own (1 row: no proof), on every
    target: ordinary rows, rows whose statistics are not finite, and calls
    whose weight, bias or scale rule the proof out; and the ordinary rows of
    the RMS norms against the float64 reference (which a proof shared by
    the whole call and the single rows could not be checked by alone)."""
    x = rows_with_nonfinite_statistics(dtype)
    residual = make(x.shape, dtype, "cpu", 6)
    hidden = x.shape[1]
    finite_w = make((hidden,), dtype, "cpu", 2, 1)
    weights = {"finite": finite_w, "nan": finite_w.clone(), "inf": finite_w.clone()}
    weights["nan"][3] = float("nan")
    weights["inf"][hidden - 1] = float("inf")
    scales = [0.37, 1e-30, 0.0, float("inf"), float("nan")]
    ordinary = [0, 1, 2, 3, 8, 9, 10, 12, 14, 15]  # finite statistics in float64 and in C alike

    def call(out, rows, w, scale, eps):
        s = torch.tensor([scale])
        if op == "rmsnorm_quant":
            hetkern.rmsnorm_quant(out, x[rows], w, s, eps)
        elif op == "fused_add_rmsnorm_quant":
            hetkern.fused_add_rmsnorm_quant(out, x[rows], residual[rows].clone(), w, s, eps)
        else:
            hetkern.layernorm_quant(out, x[rows], w, s, w.flip(0), eps)

    for _ in targets("cpu"):
        for w_name, w in weights.items():
            for scale in scales:
                for eps in (1e-6, 1e-300):
                    whole = torch.empty(x.shape, dtype=FP8)
                    call(whole, slice(None), w, scale, eps)
                    if op != "layernorm_quant":  # the RMS norms' rows against float64 too
                        y = rms_y(x[ordinary], w, eps, residual[ordinary] if op != "rmsnorm_quant" else None)
                        assert_quant_matches(whole[ordinary], y / scale)
                    for r in range(x.shape[0]):
                        alone = torch.empty(1, hidden, dtype=FP8)
                        call(alone, slice(r, r + 1), w, scale, eps)
                        case = f"row {r}, weight {w_name}, scale {scale}, eps {eps}"
                        assert torch.equal(whole[r].view(torch.uint8), alone[0].view(torch.uint8)), case


def test_cpu_bfloat16_fused_quant_residual_with_subnormal_sums(cpu_target):
    """fused_add_rmsnorm_quant stores residual = bfloat16(x + residual) in
    its write pass, on AVX512-BF16 targets two vectors at a time (split
    pairs), whose native narrowing would flush sums that are bfloat16
    subnormals: they must be stored exactly, as torch rounds them."""
    g = torch.Generator().manual_seed(13)
    for rows, hidden in [(3, 33), (9, 64), (3, 100), (2, 4099)]:
        def entries():
            ints = torch.randint(-8, 9, (rows, hidden), generator=g).double()
            tiny = torch.randint(-127, 128, (rows, hidden), generator=g).double() * 2.0**-133
            return torch.where(torch.rand(rows, hidden, generator=g) < 0.2, ints, tiny).to(torch.bfloat16)
        x, r = entries(), entries()
        w = make((hidden,), torch.bfloat16, "cpu", 2, 1)
        expected_residual = (x.float() + r.float()).to(torch.bfloat16)
        assert bool(((expected_residual.float().abs() < torch.finfo(torch.bfloat16).tiny)
                     & (expected_residual != 0)).any())
        out = torch.empty(rows, hidden, dtype=FP8)
        r_before = r.clone()
        hetkern.fused_add_rmsnorm_quant(out, x, r, w, torch.tensor([0.37]), 1e-6)
        assert_bitwise_equal(r, expected_residual)
        assert_quant_matches(out, rms_y(x, w, 1e-6, residual=r_before) / 0.37)


# ---- NumPy: no fp8 dtype ---------------------------------------------------------

def test_numpy_uint8_out():
    x = make((6, 100), torch.float32, "cpu", 1)
    w = make((100,), torch.float32, "cpu", 2, 1)
    ref = torch.empty(6, 100, dtype=FP8)
    hetkern.rmsnorm_quant(ref, x, w, torch.tensor([0.02]))
    out = np.zeros((6, 100), np.uint8)
    got = hetkern.rmsnorm_quant(out, x.numpy(), w.numpy(), np.array([0.02], np.float32), 1e-6)
    assert got is out
    assert bytes_of(out) == bytes_of(ref)
    res = x.numpy() * 0.5
    out2 = np.zeros((6, 100), np.uint8)
    got = hetkern.fused_add_rmsnorm_quant(out2, x.numpy(), res, w.numpy(), np.float32([0.02]))
    assert got[0] is out2 and got[1] is res
    np.testing.assert_array_equal(res, x.numpy() * 1.5)


def test_numpy_ml_dtypes_out():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = make((4, 33), torch.float32, "cpu", 1)
    w = make((33,), torch.float32, "cpu", 2, 1)
    ref = torch.empty(4, 33, dtype=FP8)
    hetkern.layernorm_quant(ref, x, w, torch.tensor([0.1]), None)
    out = np.zeros((4, 33), ml_dtypes.float8_e4m3fn)
    got = hetkern.layernorm_quant(out, x.numpy(), w.numpy(), np.float32([0.1]))
    assert got is out and out.dtype == ml_dtypes.float8_e4m3fn
    assert out.view(np.uint8).tobytes() == bytes_of(ref)
    np.testing.assert_array_equal(out.astype(np.float32), ref.float().numpy())


# ---- bad input: nothing written ----------------------------------------------------

def _quant_args(**change):
    args = dict(out=torch.zeros(2, 8, dtype=FP8), x=torch.ones(2, 8), weight=torch.ones(8),
                scale=torch.tensor([1.0]))
    args.update(change)
    return args


@pytest.mark.parametrize("change, exc, fragment", [
    (dict(out=torch.zeros(2, 8)), ValueError, "'out' has dtype float32; expected float8_e4m3fn"),
    (dict(out=torch.zeros(2, 8, dtype=torch.int8)), ValueError, "'out' has dtype int8"),
    (dict(out=torch.zeros(2, 9, dtype=FP8)), ValueError, r"'out' has shape \(2, 9\)"),
    (dict(scale=torch.tensor([1.0], dtype=torch.float64)), ValueError, "'scale' has dtype float64; expected float32"),
    (dict(scale=torch.tensor([1.0, 2.0])), ValueError, r"'scale' has shape \(2,\); expected one element"),
    (dict(scale=2.0), TypeError, "'scale' must be an array"),
    (dict(x=torch.ones(2, 8, dtype=FP8)), ValueError, "'x' has dtype float8_e4m3fn; expected one of"),
])
def test_bad_quant_arguments_are_refused(change, exc, fragment):
    args = _quant_args(**change)
    out = args["out"]
    before = bytes_of(out) if isinstance(out, torch.Tensor) else None
    with pytest.raises(exc, match=fragment):
        hetkern.rmsnorm_quant(**args)
    if before is not None:
        assert bytes_of(out) == before


def test_out_overlapping_an_input_is_refused():
    x = torch.ones(2, 8)
    out = x.view(torch.uint8)[:, :8]  # the bytes of x's first elements
    before = bytes_of(x)
    with pytest.raises(ValueError, match="'out' overlaps 'x'"):
        hetkern.rmsnorm_quant(out, x, torch.ones(8), torch.tensor([1.0]))
    residual = torch.ones(2, 8)
    with pytest.raises(ValueError, match="'out' overlaps 'residual'"):
        hetkern.fused_add_rmsnorm_quant(residual.view(torch.uint8)[:, :8], x, residual, torch.ones(8),
                                        torch.tensor([1.0]))
    scale = torch.zeros(4)
    with pytest.raises(ValueError, match="'out' overlaps 'scale'"):
        hetkern.rmsnorm_quant(scale.view(torch.uint8).view(2, 8), x, torch.ones(8), scale[:1])
    assert bytes_of(x) == before and bytes_of(residual) == bytes_of(torch.ones(2, 8))


@requires_cuda
def test_scale_on_another_device_is_refused():
    x = torch.ones(2, 8, device="cuda")
    out = torch.zeros(2, 8, dtype=FP8, device="cuda")
    with pytest.raises(ValueError, match="'scale' is on cpu; expected cuda:0"):
        hetkern.rmsnorm_quant(out, x, torch.ones(8, device="cuda"), torch.tensor([1.0]))
    assert not bool(out.view(torch.uint8).any())


def test_other_ops_refuse_fp8():
    with pytest.raises(ValueError, match="'x' has dtype float8_e4m3fn"):
        hetkern.rmsnorm(torch.zeros(2, 8, dtype=FP8), torch.ones(8, dtype=FP8))
    with pytest.raises(ValueError, match="'x' has dtype uint8"):
        hetkern.relu(torch.zeros(4, dtype=torch.uint8))


def test_jax_float8_out():
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax_tvm_ffi")
    import jax.numpy as jnp

    import hetkern.jax as hk

    x = make((3, 40), torch.float32, "cpu", 1)
    w = make((40,), torch.float32, "cpu", 2, 1)
    ref = torch.empty(3, 40, dtype=FP8)
    hetkern.rmsnorm_quant(ref, x, w, torch.tensor([0.1]))
    got = jax.jit(hk.rmsnorm_quant)(jnp.zeros((3, 40), jnp.float8_e4m3fn), jnp.asarray(x.numpy()),
                                    jnp.asarray(w.numpy()), jnp.asarray([0.1], jnp.float32))
    assert got.dtype == jnp.float8_e4m3fn
    assert np.asarray(got).view(np.uint8).tobytes() == bytes_of(ref)
