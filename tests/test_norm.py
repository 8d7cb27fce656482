"""hetkern.rmsnorm, fused_add_rmsnorm, their Gemma variants and layernorm
against torch (and NumPy arrays in and out) on every dtype, row length,
alignment and CPU target, with x's dtype or (16-bit x) float32 parameters,
and on CUDA where a GPU is present.

Tolerances (see docs/norm.md): the row reductions run in a different order
from the float64 references, so results are compared with bounds, not bits,
except where the op is exact (the fused residual sum). For the RMS norms the
reference mimics vLLM's roundings, and 16-bit results must also equal it bit
for bit in >= 99% of elements, which a single-rounding implementation fails
(~75%). Where the sum of squares is exact in float32 (small integers), the
reduction order cannot matter and test_rounding_contract_is_bit_exact
demands every bit of the documented contract.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import hetkern
from conftest import DTYPES, assert_bitwise_equal, bytes_of, requires_cuda

# Row lengths around SIMD widths and pack sizes, and long rows.
HIDDEN = [1, 3, 7, 15, 17, 31, 33, 63, 65, 127, 129, 1023, 1025, 4097]
HUGE_HIDDEN = [65536 + 7]
OFFSETS = [0, 3]  # elements; 3 makes every row start misaligned

# Relative rounding unit of the storage type (half an ulp at 1.0).
UNIT = {torch.float32: 2.0**-24, torch.float64: 2.0**-53, torch.float16: 2.0**-11,
        torch.bfloat16: 2.0**-8}


def compute_unit(dtype):
    return UNIT[torch.float64] if dtype == torch.float64 else UNIT[torch.float32]


def rows_tensor(shape, dtype, device="cpu", seed=0, offset=0, mean=0.0):
    """Random rows (a spread of magnitudes within and across rows) starting
    `offset` elements into a fresh buffer."""
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    base = torch.randn(n + offset, generator=g, dtype=torch.float64)
    base *= torch.exp2(torch.randint(-3, 4, (n + offset,), generator=g).double())
    flat = base[offset:].reshape(shape) + mean
    if len(shape) >= 1 and shape[-1] > 0:  # per-row scales from 2^-6 to 2^6
        rows = flat.reshape(-1, shape[-1])
        rows *= torch.exp2(torch.randint(-6, 7, (rows.shape[0], 1), generator=g).double())
    buf = torch.cat([base[:offset], flat.reshape(-1)]).to(dtype).to(device)
    return buf[offset:].view(shape)


def weight_tensor(h, dtype, device="cpu", seed=1, center=1.0):
    """center + N(0, 1/4): rmsnorm's weights scatter around 1, Gemma's (which
    scale by 1 + weight) around 0."""
    g = torch.Generator().manual_seed(seed)
    return (center + 0.5 * torch.randn(h, generator=g, dtype=torch.float64)).to(dtype).to(device)


def rmsnorm_reference(x, w, eps):
    """vLLM's rms_norm with an exact float64 mean of squares: the normalised
    value is rounded to x's dtype, then multiplied by weight in float32 (x's
    dtype or float32 weight alike) and rounded again."""
    inv_rms = torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + eps)
    if x.dtype == torch.float64:
        return x * inv_rms * w
    return ((x.float() * inv_rms.float()).to(x.dtype).float() * w.float()).to(x.dtype)


def gemma_rmsnorm_reference(x, w, eps):
    """vLLM's GemmaRMSNorm with an exact float64 mean of squares:
    x * inv_rms * (1 + w) in float32 (float64 for float64), rounded once."""
    inv_rms = torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + eps)
    if x.dtype == torch.float64:
        return x * inv_rms * (1 + w)
    return (x.float() * inv_rms.float() * (1 + w.float())).to(x.dtype)


# op -> (hetkern function, reference, weight center)
RMS_OPS = {"rmsnorm": (hetkern.rmsnorm, rmsnorm_reference, 1.0),
           "gemma_rmsnorm": (hetkern.gemma_rmsnorm, gemma_rmsnorm_reference, 0.0)}
FUSED_OPS = {"fused_add_rmsnorm": (hetkern.fused_add_rmsnorm, rmsnorm_reference, 1.0),
             "gemma_fused_add_rmsnorm": (hetkern.gemma_fused_add_rmsnorm, gemma_rmsnorm_reference, 0.0)}


def check_rms_close(got, ref, dtype, hidden):
    """|got - ref| <= bound: one storage-type ulp from a flipped rounding of
    the normalised value plus the roundings of the weight multiply (3 units),
    and the float32 sum-of-squares error (random-walk bound, sqrt(H) units)."""
    got, ref = got.double().cpu(), ref.double().cpu()
    rel = 6 * UNIT[dtype] + 4 * compute_unit(dtype) * (math.sqrt(hidden) + 4)
    tiny = torch.finfo(dtype).tiny * 4  # results in the subnormal range
    bad = (got - ref).abs() > rel * ref.abs() + tiny
    assert not bool(bad.any()), (
        f"H={hidden}: {int(bad.sum())} elements off; got {got[bad][:4].tolist()}, "
        f"expected {ref[bad][:4].tolist()}")


def check_mostly_exact(got, ref):
    """16-bit: the roundings are vLLM's, so nearly every element is bit-equal
    (only ties flipped by the reduction order differ)."""
    same = (got.cpu() == ref.cpu()).double().mean().item()
    assert same >= 0.99, f"only {same:.4f} of elements equal the vLLM-rounding reference"


def layernorm_reference(x, w, b, eps):
    xd = x.double()
    return F.layer_norm(xd, (x.shape[-1],), w.double(), None if b is None else b.double(), eps)


def check_layernorm_close(got, x, w, b, eps):
    """Output rounding (one unit of the storage type) plus the two-pass
    statistics' error: the mean's error is relative to mean|x| and the
    variance's to the normalised value, both random-walk in sqrt(H)."""
    hidden = x.shape[-1]
    if x.numel() == 0:
        assert got.shape == x.shape
        return
    ref = layernorm_reference(x, w, b, eps).cpu()
    xd = x.double().cpu()
    rstd = torch.rsqrt(xd.var(-1, unbiased=False, keepdim=True) + eps)
    spread = (xd.abs().mean(-1, keepdim=True) + (xd - xd.mean(-1, keepdim=True)).abs()) * rstd
    u = compute_unit(x.dtype)
    bias_mag = 0 if b is None else b.double().abs().cpu()
    bound = (2 * UNIT[x.dtype] * ref.abs() + 8 * u * (math.sqrt(hidden) + 4) * spread
             * w.double().abs().cpu() + 2 * u * bias_mag + torch.finfo(x.dtype).tiny * 4)
    err = (got.double().cpu() - ref).abs()
    bad = err > bound
    assert not bool(bad.any()), (
        f"H={hidden}: {int(bad.sum())} elements off; got {got.cpu()[bad][:4].tolist()}, "
        f"expected {ref[bad][:4].tolist()}")


# ---- CPU: every target, dtype, row length and alignment -------------------


def run_rmsnorm_matrix(dtype, device, hidden_list, rows=3, op="rmsnorm", param_dtype=None):
    fn, reference, center = RMS_OPS[op]
    for hidden in hidden_list:
        for offset in OFFSETS:
            x = rows_tensor((rows, hidden), dtype, device, seed=hidden, offset=offset)
            w = weight_tensor(hidden, param_dtype or dtype, device, center=center)
            y = fn(x, w, eps=1e-6)
            assert y.dtype == dtype and y.shape == x.shape and y.device == x.device
            ref = reference(x, w, 1e-6)
            check_rms_close(y, ref, dtype, hidden)
            if dtype in (torch.float16, torch.bfloat16) and y.numel() >= 1000:
                check_mostly_exact(y, ref)


def run_fused_matrix(dtype, device, hidden_list, rows=3, op="fused_add_rmsnorm", param_dtype=None):
    fn, reference, center = FUSED_OPS[op]
    for hidden in hidden_list:
        for offset in OFFSETS:
            x = rows_tensor((rows, hidden), dtype, device, seed=hidden, offset=offset)
            r = rows_tensor((rows, hidden), dtype, device, seed=hidden + 1, offset=offset + 1)
            w = weight_tensor(hidden, param_dtype or dtype, device, center=center)
            expected_residual = x + r  # exact op: bit-equal
            expected_x = reference(expected_residual, w, 1e-6)
            result = fn(x, r, w, eps=1e-6)
            assert result[0] is x and result[1] is r
            assert_bitwise_equal(r, expected_residual)
            check_rms_close(x, expected_x, dtype, hidden)
            if dtype in (torch.float16, torch.bfloat16) and x.numel() >= 1000:
                check_mostly_exact(x, expected_x)


def run_layernorm_matrix(dtype, device, hidden_list, rows=3, param_dtype=None):
    for hidden in hidden_list:
        for offset in OFFSETS:
            x = rows_tensor((rows, hidden), dtype, device, seed=hidden, offset=offset)
            w = weight_tensor(hidden, param_dtype or dtype, device)
            b = weight_tensor(hidden, param_dtype or dtype, device, seed=2, center=0.0)
            for bias in (b, None):
                y = hetkern.layernorm(x, w, bias, eps=1e-5)
                assert y.dtype == dtype and y.shape == x.shape and y.device == x.device
                check_layernorm_close(y, x, w, bias, 1e-5)


MATRIX = {**{op: partial(run_rmsnorm_matrix, op=op) for op in RMS_OPS},
          **{op: partial(run_fused_matrix, op=op) for op in FUSED_OPS},
          "layernorm": run_layernorm_matrix}
HALF_DTYPES = [torch.float16, torch.bfloat16]


@pytest.mark.parametrize("op", list(MATRIX))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_matches_reference(cpu_target, dtype, op):
    MATRIX[op](dtype, "cpu", HIDDEN)


@pytest.mark.parametrize("op", list(MATRIX))
@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
def test_cpu_float32_parameters(cpu_target, dtype, op):
    """16-bit x with float32 weight (and bias): float32 arithmetic, the same
    roundings of x's dtype as with 16-bit parameters."""
    MATRIX[op](dtype, "cpu", HIDDEN, param_dtype=torch.float32)


def contract_reference(op, x, w, eps, residual=None):
    """The documented contract step by step in the compute type (float32 for
    16-bit x), the mean of squares summed in any order: exact for the
    integer-valued rows of test_rounding_contract_is_bit_exact."""
    T = x.dtype
    if residual is not None:
        x = (x.float() + residual.float()).to(T)  # the rounded sum is the residual
    v = x.float()
    mean_sq = (v * v).sum(-1, keepdim=True) / v.shape[-1]
    # Correctly rounded float32 sqrt and division, through float64 (exact
    # enough: 53 >= 2 * 24 + 2 bits); torch's CPU float32 sqrt is not
    # (sqrt(9.000001f) gives 3.0f, not 3.0000002f).
    root = torch.sqrt((mean_sq + torch.tensor(eps, dtype=torch.float32)).double()).float()
    inv_rms = (1 / root.double()).float()
    if op.startswith("gemma"):
        return (v * inv_rms * (1 + w.float())).to(T)
    return ((v * inv_rms).to(T).float() * w.float()).to(T)


@pytest.mark.parametrize("param_dtype", [None, torch.float32], ids=["same", "f32"])
@pytest.mark.parametrize("op", list(RMS_OPS) + list(FUSED_OPS))
@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
def test_rounding_contract_is_bit_exact(cpu_target, dtype, op, param_dtype, device="cpu"):
    """Integers in [-8, 8] (sums in [-16, 16]): every partial sum of squares
    is exact in float32 whatever the order, so CPU and CUDA must reproduce
    the documented roundings bit for bit."""
    g = torch.Generator().manual_seed(11)
    for hidden in [1, 7, 33, 1025, 4096]:
        x = torch.randint(-8, 9, (4, hidden), generator=g).to(dtype).to(device)
        w = (0.5 * torch.randn(hidden, generator=g, dtype=torch.float64)
             + (0.0 if op.startswith("gemma") else 1.0)).to(param_dtype or dtype).to(device)
        if op in RMS_OPS:
            expected = contract_reference(op, x.cpu(), w.cpu(), 1e-6)
            assert_bitwise_equal(RMS_OPS[op][0](x, w, 1e-6).cpu(), expected)
        else:
            r = torch.randint(-8, 9, (4, hidden), generator=g).to(dtype).to(device)
            expected = contract_reference(op, x.cpu(), w.cpu(), 1e-6, residual=r.cpu())
            expected_residual = (x + r).cpu()
            FUSED_OPS[op][0](x, r, w, 1e-6)
            assert_bitwise_equal(r.cpu(), expected_residual)
            assert_bitwise_equal(x.cpu(), expected)


@pytest.mark.parametrize("param_dtype", [None, torch.float32], ids=["same", "f32"])
@pytest.mark.parametrize("op", list(RMS_OPS) + list(FUSED_OPS))
def test_bfloat16_rows_with_subnormal_results_among_normal_rows(cpu_target, op, param_dtype):
    """Calls of many bfloat16 rows may skip the subnormal check of the native
    narrowing (AVX512-BF16 targets) for rows that prove it unneeded
    (docs/norm.md): rows of small integers do, rows of one 2^60 among
    k * 2^-76 (normalised to k * 2^-130, bfloat16 subnormals) do not. Each
    row must follow the contract bit for bit whichever it is (sums of squares
    exact in any order), in one thread's call of 16 rows, with and without
    the weight's own tiny entries. Gemma's rows never skip the check, but
    narrow in the same split pairs (docs/norm.md)."""
    dtype = torch.bfloat16
    g = torch.Generator().manual_seed(5)
    threads = hetkern.num_threads()
    hetkern.set_num_threads(1)
    try:
        for hidden in [33, 4096]:
            rows = []
            for i in range(16):
                ints = torch.randint(-8, 9, (hidden,), generator=g).double()
                if i % 3 == 1:
                    ints = ints * 2.0**-76
                    ints[i % hidden] = 2.0**60
                rows.append(ints)
            x = torch.stack(rows).to(dtype)
            for tiny_weights in (False, True):
                w = (1 + 0.5 * torch.randn(hidden, generator=g, dtype=torch.float64))
                if tiny_weights:
                    w[::5] *= 2.0**-100
                w = w.to(param_dtype or dtype)
                if op in RMS_OPS:
                    assert_bitwise_equal(RMS_OPS[op][0](x, w, 1e-6), contract_reference(op, x, w, 1e-6))
                else:
                    out, residual = x.clone(), torch.zeros_like(x)
                    FUSED_OPS[op][0](out, residual, w, 1e-6)
                    assert_bitwise_equal(residual, x)
                    assert_bitwise_equal(out, contract_reference(op, x, w, 1e-6, residual=torch.zeros_like(x)))
    finally:
        hetkern.set_num_threads(threads)


@pytest.mark.parametrize("op", list(FUSED_OPS))
def test_bfloat16_fused_add_with_subnormal_sums(cpu_target, op):
    """x + residual rounded to bfloat16 is stored in the first pass, where
    AVX512-BF16 targets narrow two vectors at a time (docs/norm.md); sums
    that are bfloat16 subnormals must survive the native narrowing, which
    would flush them. Entries are small integers or k * 2^-133 (bfloat16
    subnormals): every sum is exact, and the subnormals' squares vanish in
    float32, so the rows also follow the contract bit for bit."""
    dtype = torch.bfloat16
    g = torch.Generator().manual_seed(13)
    for hidden in [33, 64, 100, 4099]:
        def entries():
            ints = torch.randint(-8, 9, (3, hidden), generator=g).double()
            tiny = torch.randint(-127, 128, (3, hidden), generator=g).double() * 2.0**-133
            return torch.where(torch.rand(3, hidden, generator=g) < 0.2, ints, tiny).to(dtype)
        x, r = entries(), entries()
        w = (0.5 * torch.randn(hidden, generator=g, dtype=torch.float64)
             + (0.0 if op.startswith("gemma") else 1.0)).to(dtype)
        expected_residual = (x.float() + r.float()).to(dtype)
        assert bool(((expected_residual.float().abs() < torch.finfo(dtype).tiny) & (expected_residual != 0)).any())
        expected = contract_reference(op, x, w, 1e-6, residual=r)
        FUSED_OPS[op][0](x, r, w, 1e-6)
        assert_bitwise_equal(r, expected_residual)
        assert_bitwise_equal(x, expected)


@pytest.mark.parametrize("bias", [False, True], ids=["no_bias", "zero_bias"])
@pytest.mark.parametrize("param_dtype", [None, torch.float32], ids=["same", "f32"])
def test_bfloat16_layernorm_results_in_the_subnormal_range(cpu_target, param_dtype, bias):
    """Weights below 2^-120 take layernorm's bfloat16 results into the
    subnormal range, which the native narrowing (AVX512-BF16 targets) would
    flush: every element must still round exactly, whichever vector, split
    pair (docs/norm.md) or tail holds it. Rows are small integers and their
    negations: the mean is 0 and the sum of squares exact in any order, so
    the result is x * rstd * w in float32, rounded once."""
    dtype = torch.bfloat16
    g = torch.Generator().manual_seed(9)
    for half in [1, 16, 33, 2048]:
        ints = torch.randint(-8, 9, (5, half), generator=g).double()
        x = torch.cat([ints, -ints], dim=1).to(dtype)
        hidden = x.shape[1]
        for tiny_every in [1, 3, 7]:
            w = 1 + 0.5 * torch.randn(hidden, generator=g, dtype=torch.float64)
            w[::tiny_every] *= 2.0**-128
            w = w.to(param_dtype or dtype)
            b = torch.zeros(hidden, dtype=param_dtype or dtype) if bias else None
            v = x.float()
            mean_sq = (v * v).sum(-1, keepdim=True) / hidden
            root = torch.sqrt((mean_sq + torch.tensor(1e-5, dtype=torch.float32)).double()).float()
            rstd = (1 / root.double()).float()
            y = v * rstd * w.float()
            # No product underflows inexactly (|x rstd| >= 1/8, |w| >= 2^-133 or 0), so
            # a fused multiply-add and a multiply then add agree, signed zeros too.
            expected = (y + b.float() if bias else y).to(dtype)
            got = hetkern.layernorm(x, w, b, 1e-5)
            assert bool(((expected.float().abs() < torch.finfo(dtype).tiny) & (expected != 0)).any())
            assert_bitwise_equal(got, expected)


@pytest.mark.parametrize("op", list(MATRIX))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_huge_rows(dtype, op):
    MATRIX[op](dtype, "cpu", HUGE_HIDDEN, rows=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rmsnorm_close_to_torch_rms_norm(cpu_target, dtype):
    """torch rounds once (x * inv_rms * w); vLLM's extra rounding of the
    normalised value costs at most about one more unit."""
    x = rows_tensor((8, 1000), dtype, seed=5)
    w = weight_tensor(1000, dtype)
    got = hetkern.rmsnorm(x, w, eps=1e-5).double()
    ref = F.rms_norm(x, (1000,), w, 1e-5).double()
    bound = (8 * UNIT[dtype] + 4 * compute_unit(dtype) * 36) * ref.abs() + torch.finfo(dtype).tiny * 4
    assert bool(((got - ref).abs() <= bound).all())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_layernorm_stable_for_large_means(cpu_target, dtype):
    """Rows far from zero: a one-pass E[x^2] - E[x]^2 would lose the variance."""
    x = rows_tensor((4, 4096), torch.float64, seed=3, mean=0.0)
    noise = 1.0 if dtype == torch.float32 else 16.0  # 16-bit: several ulps at 1000
    x = (noise * x / x.abs().amax(-1, keepdim=True) + 1000.0).to(dtype)
    w = weight_tensor(4096, dtype)
    y = hetkern.layernorm(x, w, None)
    check_layernorm_close(y, x, w, None, 1e-5)
    ref = layernorm_reference(x, w, None, 1e-5)
    assert float((y.double() - ref).abs().max()) < 0.05 * float(ref.abs().max())


@pytest.mark.parametrize("shape", [(0, 8), (2, 0, 5), (1,), (5,), (1, 1), (2, 3, 33), (4, 1)])
@pytest.mark.parametrize("op", list(MATRIX))
def test_shapes(op, shape):
    dtype = torch.float32
    x = rows_tensor(shape, dtype, seed=9)
    w = weight_tensor(shape[-1], dtype)
    if op in RMS_OPS:
        fn, reference, _ = RMS_OPS[op]
        y = fn(x, w)
        assert y.shape == x.shape
        check_rms_close(y, reference(x, w, 1e-6), dtype, shape[-1])
    elif op in FUSED_OPS:
        fn, reference, _ = FUSED_OPS[op]
        r = rows_tensor(shape, dtype, seed=10)
        expected_r = x + r
        expected_x = reference(expected_r, w, 1e-6)
        fn(x, r, w)
        assert_bitwise_equal(r, expected_r)
        check_rms_close(x, expected_x, dtype, shape[-1])
    else:
        y = hetkern.layernorm(x, w, w)
        assert y.shape == x.shape
        check_layernorm_close(y, x, w, w, 1e-5)


def test_single_element_rows():
    """H = 1: rmsnorm gives sign(x) * w (up to eps), gemma_rmsnorm
    sign(x) * (1 + w), layernorm gives bias."""
    x = torch.tensor([[3.0], [-2.0], [0.0]])
    w = torch.tensor([2.0])
    assert_bitwise_equal(hetkern.layernorm(x, w, torch.tensor([0.5])), torch.full((3, 1), 0.5))
    y = hetkern.rmsnorm(x, w, eps=1e-12)
    assert torch.allclose(y, torch.tensor([[2.0], [-2.0], [0.0]]))
    y = hetkern.gemma_rmsnorm(x, w, eps=1e-12)
    assert torch.allclose(y, torch.tensor([[3.0], [-3.0], [0.0]]))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_in_place(cpu_target, dtype):
    w = weight_tensor(1025, dtype)
    for fn in (hetkern.rmsnorm, hetkern.gemma_rmsnorm):
        x = rows_tensor((5, 1025), dtype, seed=4, offset=1)
        expected = fn(x, w)
        assert fn(x, w, out=x) is x
        assert_bitwise_equal(x, expected)
    x = rows_tensor((5, 1025), dtype, seed=4, offset=1)
    expected = hetkern.layernorm(x, w, w)
    assert hetkern.layernorm(x, w, w, out=x) is x
    assert_bitwise_equal(x, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_in_numpy_out(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 65)).astype(dtype)
    w = rng.standard_normal(65).astype(dtype)
    b = rng.standard_normal(65).astype(dtype)
    y = hetkern.rmsnorm(x, w)
    assert type(y) is np.ndarray and y.dtype == dtype and y.shape == x.shape
    check_rms_close(torch.from_numpy(y), rmsnorm_reference(torch.from_numpy(x), torch.from_numpy(w), 1e-6),
                    torch.from_numpy(x).dtype, 65)
    z = hetkern.layernorm(x, w, b)
    assert type(z) is np.ndarray and z.dtype == dtype
    xt, wt, bt = map(torch.from_numpy, (x, w, b))
    check_layernorm_close(torch.from_numpy(z), xt, wt, bt, 1e-5)
    r = rng.standard_normal((7, 65)).astype(dtype)
    xs, rs = hetkern.fused_add_rmsnorm(x, r, w)
    assert xs is x and rs is r
    xs, rs = hetkern.gemma_fused_add_rmsnorm(x, r, w)
    assert xs is x and rs is r


def test_numpy_float16_with_float32_weight():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 33)).astype(np.float16)
    w = rng.standard_normal(33).astype(np.float32)
    for fn, reference in [(hetkern.rmsnorm, rmsnorm_reference),
                          (hetkern.gemma_rmsnorm, gemma_rmsnorm_reference)]:
        y = fn(x, w)
        assert type(y) is np.ndarray and y.dtype == np.float16
        check_rms_close(torch.from_numpy(y), reference(torch.from_numpy(x), torch.from_numpy(w), 1e-6),
                        torch.float16, 33)


def test_out_is_returned_and_written():
    x = rows_tensor((3, 17), torch.float32)
    w = weight_tensor(17, torch.float32)
    out = torch.full_like(x, 7.0)
    assert hetkern.rmsnorm(x, w, out=out) is out
    assert_bitwise_equal(out, hetkern.rmsnorm(x, w))
    out = torch.full_like(x, 7.0)
    assert hetkern.layernorm(x, w, None, out=out) is out
    assert_bitwise_equal(out, hetkern.layernorm(x, w))


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("op", list(MATRIX))
def test_threaded_results_equal_single_threaded(op, threads):
    def run():
        x = rows_tensor((301, 1536), torch.bfloat16, seed=7, offset=1)
        w = weight_tensor(1536, torch.bfloat16)
        if op in FUSED_OPS:
            r = rows_tensor((301, 1536), torch.bfloat16, seed=8)
            return getattr(hetkern, op)(x, r, w)[0]
        return getattr(hetkern, op)(x, w)

    try:
        hetkern.set_num_threads(1)
        single = run()
        hetkern.set_num_threads(threads)
        assert_bitwise_equal(run(), single)
    finally:
        hetkern.set_num_threads(0)


# ---- Bad input: the right error, and nothing written ------------------------


def _f32(*shape, fill=1.0):
    return np.full(shape, fill, np.float32)


ERROR_CASES = [
    # (id, exception, message fragment, call(out))
    ("x-list", TypeError, "'x' must be an array", lambda out: hetkern.rmsnorm([[1.0]], _f32(1), out=out)),
    ("weight-none", TypeError, "'weight' must be an array", lambda out: hetkern.rmsnorm(_f32(2, 4), None, out=out)),
    ("eps-str", TypeError, "'eps' must be a real number", lambda out: hetkern.rmsnorm(_f32(2, 4), _f32(4), "1e-6", out=out)),
    ("eps-zero", ValueError, "'eps' is 0; expected a finite number > 0", lambda out: hetkern.rmsnorm(_f32(2, 4), _f32(4), 0.0, out=out)),
    ("eps-negative", ValueError, "'eps' is -1", lambda out: hetkern.layernorm(_f32(2, 4), _f32(4), None, -1.0, out=out)),
    ("eps-nan", ValueError, "'eps' is nan", lambda out: hetkern.rmsnorm(_f32(2, 4), _f32(4), float("nan"), out=out)),
    ("eps-inf", ValueError, "'eps' is inf", lambda out: hetkern.layernorm(_f32(2, 4), _f32(4), None, float("inf"), out=out)),
    ("x-int", ValueError, "'x' has dtype int32", lambda out: hetkern.rmsnorm(np.ones((2, 4), np.int32), _f32(4), out=out)),
    ("x-0d", ValueError, "'x' is 0-dimensional", lambda out: hetkern.rmsnorm(np.array(1.0, np.float32), _f32(1), out=out)),
    ("x-empty-rows", ValueError, "'x' has an empty last dimension", lambda out: hetkern.rmsnorm(_f32(2, 0), _f32(0), out=out)),
    ("weight-length", ValueError, r"'weight' must have shape \(4,\)", lambda out: hetkern.rmsnorm(_f32(2, 4), _f32(5), out=out)),
    ("weight-2d", ValueError, r"'weight' must have shape \(4,\)", lambda out: hetkern.layernorm(_f32(2, 4), _f32(1, 4), out=out)),
    ("weight-dtype", ValueError, "'weight' has dtype float64; expected float32 like 'x'$", lambda out: hetkern.rmsnorm(_f32(2, 4), np.ones(4), out=out)),
    ("gemma-weight-dtype", ValueError, "hetkern.gemma_rmsnorm: 'weight' has dtype float16; expected float32 like 'x'$", lambda out: hetkern.gemma_rmsnorm(_f32(2, 4), np.ones(4, np.float16), out=out)),
    ("weight-strided", ValueError, "'weight' must be contiguous", lambda out: hetkern.rmsnorm(_f32(2, 4), _f32(8)[::2], out=out)),
    ("bias-length", ValueError, r"'bias' must have shape \(4,\)", lambda out: hetkern.layernorm(_f32(2, 4), _f32(4), _f32(3), out=out)),
    ("bias-dtype", ValueError, "'bias' has dtype float64", lambda out: hetkern.layernorm(_f32(2, 4), _f32(4), np.ones(4), out=out)),
    ("out-shape", ValueError, r"'out' has shape \(2, 4\); expected \(4, 2\)", lambda out: hetkern.rmsnorm(_f32(4, 2), _f32(2), out=out)),
    ("out-dtype", ValueError, "'out' has dtype float32; expected float64", lambda out: hetkern.layernorm(np.ones((2, 4)), np.ones(4), out=out)),
    ("out-list", TypeError, "'out' must be an array", lambda out: hetkern.rmsnorm(_f32(2, 4), _f32(4), out=[0.0] * 8)),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_bad_input_raises_and_writes_nothing(case):
    _, exc, fragment, call = case
    out = _f32(2, 4, fill=7.0)
    before = bytes_of(out)
    with pytest.raises(exc, match=fragment):
        call(out)
    assert bytes_of(out) == before


def test_out_overlapping_weight_is_rejected():
    buf = np.arange(12, dtype=np.float32)
    before = buf.copy()
    x = _f32(2, 4)
    with pytest.raises(ValueError, match="'out' overlaps 'weight'"):
        hetkern.rmsnorm(x, buf[:4], out=buf[:8].reshape(2, 4))
    with pytest.raises(ValueError, match="'out' overlaps 'bias'"):
        hetkern.layernorm(x, _f32(4), buf[8:], out=buf[4:12].reshape(2, 4))
    np.testing.assert_array_equal(buf, before)


def test_out_partially_overlapping_x_is_rejected():
    buf = np.arange(12, dtype=np.float32)
    before = buf.copy()
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):
        hetkern.layernorm(buf[:8].reshape(2, 4), _f32(4), out=buf[4:].reshape(2, 4))
    np.testing.assert_array_equal(buf, before)


def _t(dtype, *shape, fill=1.0):
    return torch.full(shape, fill, dtype=dtype)


F16, BF16, F32, F64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
# (x dtype, weight dtype, message): parameters are x's dtype or, for 16-bit
# x only, float32.
BAD_PARAM_MIXES = [
    (F16, BF16, "'weight' has dtype bfloat16; expected float16 like 'x', or float32"),
    (BF16, F16, "'weight' has dtype float16; expected bfloat16 like 'x', or float32"),
    (BF16, F64, "'weight' has dtype float64; expected bfloat16 like 'x', or float32"),
    (F32, F16, "'weight' has dtype float16; expected float32 like 'x'$"),
    (F32, F64, "'weight' has dtype float64; expected float32 like 'x'$"),
    (F64, F32, "'weight' has dtype float32; expected float64 like 'x'$"),
]


@pytest.mark.parametrize("mix", BAD_PARAM_MIXES, ids=lambda m: f"{m[0]}-{m[1]}"[12:])
@pytest.mark.parametrize("op", list(MATRIX))
def test_bad_parameter_dtype_raises_and_writes_nothing(op, mix):
    x_dtype, w_dtype, message = mix
    x, r, out = _t(x_dtype, 2, 4, fill=2.0), _t(x_dtype, 2, 4, fill=3.0), _t(x_dtype, 2, 4, fill=7.0)
    before = [t.clone() for t in (x, r, out)]
    w = _t(w_dtype, 4)
    with pytest.raises(ValueError, match=f"hetkern.{op}: {message}"):
        if op in FUSED_OPS:
            getattr(hetkern, op)(x, r, w)
        elif op == "layernorm":
            hetkern.layernorm(x, w, w, out=out)
        else:
            getattr(hetkern, op)(x, w, out=out)
    for t, b in zip((x, r, out), before):
        assert_bitwise_equal(t, b)


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
def test_layernorm_weight_and_bias_share_a_dtype(dtype):
    """Each may be x's dtype or float32, but one dtype for both."""
    x, out = _t(dtype, 2, 4, fill=2.0), _t(dtype, 2, 4, fill=7.0)
    name = str(dtype)[6:]
    for w, b, message in [(_t(F32, 4), _t(dtype, 4), f"'bias' has dtype {name}; expected float32 like 'weight'"),
                          (_t(dtype, 4), _t(F32, 4), f"'bias' has dtype float32; expected {name} like 'weight'")]:
        with pytest.raises(ValueError, match=message):
            hetkern.layernorm(x, w, b, out=out)
        assert bool((out == 7.0).all())
    assert hetkern.layernorm(x, _t(F32, 4), _t(F32, 4), out=out) is out
    assert hetkern.layernorm(x, _t(F32, 4), None, out=out) is out


def test_fused_add_bad_input_writes_nothing():
    x, r, w = _f32(2, 4, fill=2.0), _f32(2, 4, fill=3.0), _f32(4)
    before = bytes_of(x), bytes_of(r)
    cases = [
        (ValueError, r"'residual' has shape \(4, 2\); expected \(2, 4\)", lambda: hetkern.fused_add_rmsnorm(x, _f32(4, 2), w)),
        (ValueError, "'residual' has dtype float64", lambda: hetkern.fused_add_rmsnorm(x, np.ones((2, 4)), w)),
        (ValueError, "'residual' overlaps 'x'", lambda: hetkern.fused_add_rmsnorm(x, x, w)),
        (ValueError, "'x' overlaps 'weight'", lambda: hetkern.fused_add_rmsnorm(x, r, x.reshape(-1)[:4])),
        (ValueError, "'residual' overlaps 'weight'", lambda: hetkern.fused_add_rmsnorm(x, r, r.reshape(-1)[4:])),
        (ValueError, "'eps' is -0.5", lambda: hetkern.fused_add_rmsnorm(x, r, w, -0.5)),
        (ValueError, r"'weight' must have shape \(4,\)", lambda: hetkern.fused_add_rmsnorm(x, r, _f32(3))),
        (TypeError, "'residual' must be an array", lambda: hetkern.fused_add_rmsnorm(x, None, w)),
    ]
    for exc, fragment, call in cases:
        with pytest.raises(exc, match=fragment):
            call()
        assert (bytes_of(x), bytes_of(r)) == before
    shared = np.arange(12, dtype=np.float32)
    with pytest.raises(ValueError, match="'residual' overlaps 'x'"):
        hetkern.fused_add_rmsnorm(shared[:8].reshape(2, 4), shared[4:].reshape(2, 4), w)
    np.testing.assert_array_equal(shared, np.arange(12, dtype=np.float32))


@pytest.mark.parametrize("name", ["x", "residual"])
def test_fused_add_read_only_is_rejected(name):
    arrays = {"x": _f32(2, 4, fill=2.0), "residual": _f32(2, 4, fill=3.0)}
    arrays[name].flags.writeable = False
    other = "residual" if name == "x" else "x"
    before = bytes_of(arrays[other])
    with pytest.raises(ValueError, match=f"'{name}' is read-only"):
        hetkern.fused_add_rmsnorm(arrays["x"], arrays["residual"], _f32(4))
    assert bytes_of(arrays[other]) == before


def test_read_only_out_and_inputs():
    x, w = _f32(2, 4, fill=2.0), _f32(4)
    x.flags.writeable = False
    w.flags.writeable = False
    np.testing.assert_allclose(hetkern.rmsnorm(x, w), np.ones((2, 4), np.float32), rtol=1e-6)
    out = _f32(2, 4, fill=7.0)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="'out' is read-only"):
        hetkern.layernorm(x, w, out=out)
    assert (out == 7.0).all()


@requires_cuda  # a CPU-only build refuses CUDA tensors before it compares devices
def test_device_mismatch():
    x = torch.ones(2, 4, device="cuda")
    out = torch.full((2, 4), 7.0, device="cuda")
    with pytest.raises(ValueError, match="'weight' is on cpu; expected cuda:0 like 'x'"):
        hetkern.rmsnorm(x, torch.ones(4), out=out)
    with pytest.raises(ValueError, match="'bias' is on cpu; expected cuda:0 like 'x'"):
        hetkern.layernorm(x, torch.ones(4, device="cuda"), torch.ones(4), out=out)
    assert bool((out == 7.0).all())


# ---- CUDA ------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("op", list(MATRIX))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_reference(dtype, op):
    MATRIX[op](dtype, "cuda", HIDDEN + [4096, 8192, 16384, 16384 + 8])
    # Rows held in registers by a whole SM's 1024-thread block (RowGrid::kWholeSm
    # in src/cuda/norm.cu): 2049-4096 packs, e.g. float32 8196-16384 values,
    # 16-bit 16392-32768 (17-32 warps; 24576 + 8 ends in a partial warp).
    MATRIX[op](dtype, "cuda", [8196, 12288, 16392, 24576 + 8, 32768], rows=2)
    MATRIX[op](dtype, "cuda", HUGE_HIDDEN + [65536, 2**17, 2**18 + 8], rows=2)


@requires_cuda
@pytest.mark.parametrize("op", list(MATRIX))
@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
def test_cuda_float32_parameters(dtype, op):
    MATRIX[op](dtype, "cuda", HIDDEN + [4096, 8192, 16384 + 8, 32768], param_dtype=torch.float32)
    MATRIX[op](dtype, "cuda", HUGE_HIDDEN + [2**17], rows=2, param_dtype=torch.float32)


@requires_cuda
@pytest.mark.parametrize("param_dtype", [None, torch.float32], ids=["same", "f32"])
@pytest.mark.parametrize("op", list(RMS_OPS) + list(FUSED_OPS))
@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=str)
def test_cuda_rounding_contract_is_bit_exact(dtype, op, param_dtype):
    test_rounding_contract_is_bit_exact(None, dtype, op, param_dtype, device="cuda")


@requires_cuda
@pytest.mark.parametrize("op", list(MATRIX))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_cuda_llm_shapes(dtype, op):
    """Many rows (grid-stride over rows) at hidden sizes of LLMs."""
    for tokens, hidden in [(1, 4096), (7, 1024), (4099, 2048), (1000, 5120)]:
        MATRIX[op](dtype, "cuda", [hidden], rows=tokens)


@requires_cuda
@pytest.mark.parametrize("op", list(MATRIX))
@pytest.mark.parametrize("hidden", [512, 1024, 1536, 2048, 3072, 4096, 8192, 5120, 16384, 32768])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_cuda_row_bits_independent_of_row_count(op, hidden, dtype):
    """The launch shape follows H alone: a row gives the same bits alone and
    in a batch of 4096 rows (grid-stride, many blocks per SM; layernorm's
    rows of up to 1024 values on one warp). A row alone sums its warps'
    partials directly, a batch by a butterfly (RowSum): 2-32 warps a row
    here, 3 and 6 among them (32: float32 rows of 16384 and bfloat16 rows
    of 32768 over a whole SM's threads, whose large calls prefetch later rows
    to L2, and which the large calls of layernorm and of 16-bit x split over
    half the threads: kSplitWholeSmRows in src/cuda/norm.cu)."""
    rows = 4096
    x = rows_tensor((rows, hidden), dtype, "cuda", seed=hidden)
    r = rows_tensor((rows, hidden), dtype, "cuda", seed=hidden + 1)
    w = weight_tensor(hidden, dtype, "cuda")

    def run(x, r):
        if op in RMS_OPS:
            return RMS_OPS[op][0](x, w)
        if op in FUSED_OPS:
            FUSED_OPS[op][0](x, r, w)
            return x
        return hetkern.layernorm(x, w, w)

    batch = run(x.clone(), r.clone())
    for row in (0, 1, rows - 1):
        alone = run(x[row:row + 1].clone(), r[row:row + 1].clone())
        assert_bitwise_equal(batch[row:row + 1], alone)


@requires_cuda
def test_cuda_misaligned_weight_and_out():
    """Every pointer must allow 16-byte packs; a misaligned one takes the
    element-wise path, with the same results up to the reduction order."""
    hidden = 4096
    x = rows_tensor((33, hidden), torch.bfloat16, "cuda", seed=1)
    w_buf = weight_tensor(hidden + 1, torch.bfloat16, "cuda")
    out_buf = torch.empty(33 * hidden + 1, dtype=torch.bfloat16, device="cuda")
    w, out = w_buf[1:], out_buf[1:].view(33, hidden)
    hetkern.rmsnorm(x, w, out=out)
    check_rms_close(out, rmsnorm_reference(x, w, 1e-6), torch.bfloat16, hidden)
    hetkern.layernorm(x, w, w, out=out)
    check_layernorm_close(out, x, w, w, 1e-5)


@requires_cuda
def test_cuda_float32_weight_aligned_to_16_not_32_bytes():
    """A float32 parameter pack of 8 lanes (bfloat16 x) is 32 bytes: a weight
    16-byte aligned but not 32 must take the element-wise path."""
    hidden = 4096
    x = rows_tensor((33, hidden), torch.bfloat16, "cuda", seed=1)
    w_buf = weight_tensor(hidden + 4, torch.float32, "cuda")
    w = w_buf[4:]
    assert w.data_ptr() % 32 == 16
    out = hetkern.rmsnorm(x, w)
    check_rms_close(out, rmsnorm_reference(x, w, 1e-6), torch.bfloat16, hidden)
    out = hetkern.gemma_rmsnorm(x, w)
    check_rms_close(out, gemma_rmsnorm_reference(x, w, 1e-6), torch.bfloat16, hidden)
    hetkern.layernorm(x, w, w, out=out)
    check_layernorm_close(out, x, w, w, 1e-5)


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_in_place(dtype):
    x = rows_tensor((5, 4096), dtype, "cuda", seed=4)
    w = weight_tensor(4096, dtype, "cuda")
    expected = hetkern.rmsnorm(x, w)
    assert hetkern.rmsnorm(x, w, out=x) is x
    assert_bitwise_equal(x, expected)
    x = rows_tensor((5, 4096), dtype, "cuda", seed=4)
    expected = hetkern.layernorm(x, w, w)
    assert hetkern.layernorm(x, w, w, out=x) is x
    assert_bitwise_equal(x, expected)


@requires_cuda
def test_cuda_runs_on_current_stream():
    """On a side stream, x is filled only after a long GPU sleep; a kernel
    launched anywhere but on that stream would read x before the fill."""
    x = torch.zeros(64, 4096, device="cuda")
    w = torch.ones(4096, device="cuda")
    r = torch.zeros_like(x)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(3.0)
        y = hetkern.rmsnorm(x, w)
        z = hetkern.layernorm(x, w, w)
        hetkern.fused_add_rmsnorm(x, r, w)
    side.synchronize()
    assert torch.allclose(y, torch.ones_like(y))
    assert torch.allclose(z, torch.ones_like(z))
    assert bool((r == 3.0).all()) and torch.allclose(x, torch.ones_like(x))


@requires_cuda
def test_cuda_graph_capture_and_replay():
    x = torch.randn(256, 4096, device="cuda", dtype=torch.bfloat16)
    r = torch.randn_like(x)
    w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    out_rms, out_ln = torch.empty_like(x), torch.empty_like(x)
    x2, r2 = x.clone(), r.clone()

    def step():
        hetkern.rmsnorm(x, w, out=out_rms)
        hetkern.layernorm(x, w, w, out=out_ln)
        x2.copy_(x)
        r2.copy_(r)
        hetkern.fused_add_rmsnorm(x2, r2, w)

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        step()  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    x.copy_(torch.randn_like(x))
    r.copy_(torch.randn_like(r))
    graph.replay()
    torch.cuda.synchronize()
    assert_bitwise_equal(out_rms, hetkern.rmsnorm(x, w))
    assert_bitwise_equal(out_ln, hetkern.layernorm(x, w, w))
    xe, re = x.clone(), r.clone()
    hetkern.fused_add_rmsnorm(xe, re, w)
    assert_bitwise_equal(x2, xe)
    assert_bitwise_equal(r2, re)
