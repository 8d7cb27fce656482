"""add/sub/mul/div, axpby and cast against torch (and NumPy) on every dtype,
size, alignment, broadcast and CPU target, and on CUDA where a GPU is present.

Contract (docs/elementwise.md): one rounding from the compute type (float32
for 16-bit types), bit-equal to torch. Two documented exceptions are tested
against their own exact references: a Python-number y is rounded to the
compute type (torch's CPU add/sub round it to float16/bfloat16 instead, and
torch's CUDA div multiplies by its reciprocal), and 16-bit axpby rounds once
from float32 (torch rounds each intermediate).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
import torch

import hetkern
from conftest import DTYPES, assert_bitwise_equal, bytes_of, random_tensor, requires_cuda

HALF = (torch.float16, torch.bfloat16)
OPS = {
    "add": (hetkern.add, operator.add),
    "sub": (hetkern.sub, operator.sub),
    "mul": (hetkern.mul, operator.mul),
    "div": (hetkern.div, operator.truediv),
}
SIZES = [0, 1, 3, 7, 15, 17, 31, 33, 63, 65, 127, 129, 1023, 1025, 4097, 65536 + 3]
# (x shape, y shape): trailing-dims broadcasts, one-element y, empty arrays,
# rows of length 1, odd rows around SIMD widths and a huge row.
BROADCASTS = [
    ((5, 1), (1,)),
    ((4, 3), (3,)),
    ((3, 7), (7,)),
    ((9, 17), (17,)),
    ((3, 33), (33,)),
    ((5, 64), (64,)),
    ((2, 129), (129,)),
    ((3, 1025), (1025,)),
    ((2, 3, 5), (3, 5)),
    ((2, 3, 5), (5,)),
    ((37,), (1,)),
    ((6, 7), ()),
    ((), (1,)),
    ((), ()),
    ((0, 5), (5,)),
    ((4, 0), (0,)),
    ((2, 65536 + 5), (65536 + 5,)),
]


def compute_dtype(dtype):
    return torch.float32 if dtype in HALF else dtype


def number_reference(op, x, s):
    """x (op) s with s rounded to the compute type and one rounding at the
    end, via tensor-tensor ops (no scalar fast path of torch's involved)."""
    c = compute_dtype(x.dtype)
    xc = x.to(c)
    return op(xc, torch.full_like(xc, s)).to(x.dtype)


def axpby_reference(x, y, a, b):
    if x.dtype in HALF:
        return (a * x.float() + b * y.float()).to(x.dtype)
    return a * x + b * y


def make(shape, dtype, device="cpu", seed=0, offset=0):
    n = int(np.prod(shape, dtype=np.int64))
    return random_tensor(n, dtype, device, seed=seed, offset=offset).reshape(shape)


# ---- binary ops on CPU -------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_same_shape_matches_torch_bitwise(cpu_target, dtype):
    for n in SIZES:
        for x_offset, y_offset in [(0, 0), (3, 5)]:
            x = random_tensor(n, dtype, seed=n, offset=x_offset)
            y = random_tensor(n, dtype, seed=n + 1, offset=y_offset)
            for name, (ours, op) in OPS.items():
                assert_bitwise_equal(ours(x, y), op(x, y))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_broadcast_matches_torch_bitwise(cpu_target, dtype):
    for x_shape, y_shape in BROADCASTS:
        for x_offset, y_offset in [(0, 0), (1, 3)]:
            x = make(x_shape, dtype, seed=1, offset=x_offset)
            y = make(y_shape, dtype, seed=2, offset=y_offset)
            for name, (ours, op) in OPS.items():
                result = ours(x, y)
                assert result.shape == x.shape, (name, x_shape, y_shape)
                # NumPy rules would give () op (1,) the shape (1,); ours keep x's.
                assert_bitwise_equal(result, op(x, y).reshape(x.shape))


NUMBERS = [2.5, -0.75, 1024, 2.7, 0.1, -1e-3, 3e38, 1e-40, np.float32(1.1), np.float64(-7.3), True]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_number_y(cpu_target, dtype):
    x = random_tensor(1031, dtype, offset=1)
    for s in NUMBERS:
        for name, (ours, op) in OPS.items():
            result = ours(x, s)
            assert_bitwise_equal(result, number_reference(op, x, float(s)))
            if (name in ("mul", "div") or dtype not in HALF) and type(s) is not bool:
                # torch rounds the number to the compute type too.
                assert_bitwise_equal(result, op(x, s))


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_number_y_representable_in_16_bits_equals_torch(cpu_target, dtype):
    """Where the number is exact in the 16-bit type, torch's CPU add/sub (which
    round it to that type first) agree too."""
    x = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    for s in [2.5, -0.75, 1024.0, 0.0, -0.0, 1.5, float("inf")]:
        for name, (ours, op) in OPS.items():
            assert_bitwise_equal(ours(x, s), op(x, s))


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_every_16_bit_pattern(cpu_target, dtype):
    """All 65536 patterns (subnormals, inf, NaN) against shuffled partners:
    rounding ties, overflow and underflow of every op."""
    x = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    g = torch.Generator().manual_seed(3)
    y = x[torch.randperm(x.numel(), generator=g)]
    for name, (ours, op) in OPS.items():
        assert_bitwise_equal(ours(x, y), op(x, y))
    assert_bitwise_equal(hetkern.axpby(x, y, 0.7, -1.3), axpby_reference(x, y, 0.7, -1.3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_random_bit_patterns(cpu_target, dtype):
    """Random bits: subnormals, inf, NaN and huge/tiny magnitudes."""
    g = torch.Generator().manual_seed(4)
    int_dtype = torch.int32 if dtype == torch.float32 else torch.int64
    info = torch.iinfo(int_dtype)
    x, y = (torch.randint(info.min, info.max, (1 << 14,), generator=g, dtype=int_dtype).view(dtype)
            for _ in range(2))
    for name, (ours, op) in OPS.items():
        assert_bitwise_equal(ours(x, y), op(x, y))
    assert_bitwise_equal(hetkern.axpby(x, y, 1.5, -0.3), 1.5 * x + -0.3 * y)


def test_in_place(cpu_target):
    for dtype in DTYPES:
        x = random_tensor(1027, dtype, offset=1)
        y = random_tensor(1027, dtype, seed=5)
        expected = x / y
        assert hetkern.div(x, y, out=x) is x
        assert_bitwise_equal(x, expected)
        expected = x - y
        assert hetkern.sub(x, y, out=y) is y  # out = y (same shape)
        assert_bitwise_equal(y, expected)
        rows, row = make((7, 33), dtype, offset=3), make((33,), dtype, seed=6)
        expected = rows * row
        assert hetkern.mul(rows, row, out=rows) is rows
        assert_bitwise_equal(rows, expected)
        expected = number_reference(operator.add, rows, 0.3)
        assert hetkern.add(rows, 0.3, out=rows) is rows
        assert_bitwise_equal(rows, expected)


@pytest.mark.parametrize("threads", [2, 3])
def test_threaded_results_equal_single_threaded(threads):
    """Chunk boundaries fall inside rows of an odd-length broadcast y."""
    x = make((1000, 1531), torch.float16, offset=1)
    y = make((1531,), torch.float16, seed=7)
    xs = make((3, 2**20 + 3), torch.float32)
    ys = make((2**20 + 3,), torch.float32, seed=8)
    try:
        hetkern.set_num_threads(threads)
        assert_bitwise_equal(hetkern.sub(x, y), x - y)
        assert_bitwise_equal(hetkern.axpby(x, y, 0.5, 3.0), axpby_reference(x, y, 0.5, 3.0))
        assert_bitwise_equal(hetkern.add(x, y[:1]), x + y[:1])
        assert_bitwise_equal(hetkern.div(xs, ys), xs / ys)
        assert_bitwise_equal(hetkern.cast(xs, torch.bfloat16), xs.to(torch.bfloat16))
    finally:
        hetkern.set_num_threads(0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's divide-by-zero notes
def test_numpy_in_numpy_out(cpu_target):
    rng = np.random.default_rng(0)
    for dtype in [np.float32, np.float64, np.float16]:
        x = rng.standard_normal(4093).astype(dtype)[1:].reshape(31, 132)
        y = rng.standard_normal(133).astype(dtype)[1:]
        for ours, theirs in [(hetkern.add, np.add), (hetkern.sub, np.subtract),
                             (hetkern.mul, np.multiply), (hetkern.div, np.divide)]:
            for yy in [y, x + 1]:
                out = np.empty_like(x)
                assert ours(x, yy, out=out) is out
                np.testing.assert_array_equal(out, theirs(x, yy))
                result = ours(x, yy)
                assert type(result) is np.ndarray and result.dtype == dtype
                np.testing.assert_array_equal(result, theirs(x, yy))
            if dtype != np.float16:  # NumPy rounds a Python float to float16 first
                np.testing.assert_array_equal(ours(x, 0.1), theirs(x, 0.1))


def test_read_only_inputs_are_accepted():
    x = np.arange(6, dtype=np.float32)
    y = np.full(6, 2.0, np.float32)
    x.flags.writeable = False
    y.flags.writeable = False
    np.testing.assert_array_equal(hetkern.mul(x, y), x * y)
    np.testing.assert_array_equal(hetkern.axpby(x, y, 2, 3), 2 * x + 3 * y)
    np.testing.assert_array_equal(hetkern.cast(x, "float16"), x.astype(np.float16))


# ---- axpby on CPU ------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_axpby(cpu_target, dtype):
    cases = [((n,), (n,)) for n in SIZES] + BROADCASTS
    for x_shape, y_shape in cases:
        x = make(x_shape, dtype, seed=9, offset=1)
        y = make(y_shape, dtype, seed=10)
        for a, b in [(0.3, -1.7), (1.0, 1.0), (2, 0.1), (-0.0, 1e30)]:
            expected = axpby_reference(x, y, a, b).reshape(x.shape)
            assert_bitwise_equal(hetkern.axpby(x, y, a, b), expected)


def test_axpby_in_place_and_numpy(cpu_target):
    x = random_tensor(1000, torch.float32, offset=2)
    y = random_tensor(1000, torch.float32, seed=1)
    expected = 0.9 * x + 0.1 * y
    assert hetkern.axpby(x, y, 0.9, 0.1, out=x) is x
    assert_bitwise_equal(x, expected)
    xn = np.linspace(-3, 3, 101)
    yn = np.cos(xn)
    np.testing.assert_array_equal(hetkern.axpby(xn, yn, 0.25, -3.5), 0.25 * xn + -3.5 * yn)


# ---- cast on CPU -------------------------------------------------------------


def every_16_bit_pattern(dtype, device="cpu"):
    return torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype).to(device)


def special_float64():
    """Doubles that stress float64 -> float32/16-bit rounding: exact ties
    between floats, one ulp either side, overflow and underflow edges, the
    float64 -> float16 double-rounding cases."""
    g = torch.Generator().manual_seed(11)
    f = torch.randn(2000, generator=g, dtype=torch.float64).float()
    f = f * torch.exp2(torch.randint(-140, 128, (2000,), generator=g).float())
    lo = f.double()
    hi = torch.nextafter(f, torch.full_like(f, float("inf"))).double()
    ties = (lo + hi) / 2  # exact in float64
    ulp = torch.nextafter(ties, torch.full_like(ties, float("inf"))) - ties
    edges = torch.tensor([
        0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e300, -1e300, 1e-300,
        3.4028235e38, 3.4028235677973366e38, 3.4028235677973367e38, 3.5e38,  # FLT_MAX and its rounding edge
        65504.0, 65519.99, 65520.0, 65536.0,  # float16 max and overflow edge
        3.3895313892515355e38, 3.39e38,  # bfloat16 max and beyond
        2.0**-24, 2.0**-25, 2.0**-25 * 1.0000001, 1.5 * 2.0**-24, 2.0**-149, 2.0**-150, 2.0**-151,
        1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-8 + 2.0**-40,  # double rounding through float32
    ], dtype=torch.float64)
    return torch.cat([ties, ties + ulp, ties - ulp, edges, -edges])


def random_bits(dtype, n, seed):
    int_dtype = {torch.float32: torch.int32, torch.float64: torch.int64}[dtype]
    info = torch.iinfo(int_dtype)
    g = torch.Generator().manual_seed(seed)
    return torch.randint(info.min, info.max, (n,), generator=g, dtype=int_dtype).view(dtype)


@pytest.mark.parametrize("out_dtype", DTYPES, ids=str)
def test_cast_matches_torch_bitwise(cpu_target, out_dtype):
    inputs = [every_16_bit_pattern(torch.float16), every_16_bit_pattern(torch.bfloat16),
              random_bits(torch.float32, 1 << 15, 12), random_bits(torch.float64, 1 << 15, 13),
              special_float64(), special_float64().float()]
    for x in inputs:
        assert_bitwise_equal(hetkern.cast(x, out_dtype), x.to(out_dtype))
    for in_dtype in DTYPES:
        for n, offset in [(0, 0), (1, 1), (7, 0), (17, 3), (33, 1), (129, 0), (1025, 3), (65536 + 3, 1)]:
            x = random_tensor(n, in_dtype, seed=n, offset=offset)
            assert_bitwise_equal(hetkern.cast(x, out_dtype), x.to(out_dtype))


def test_cast_float32_to_bfloat16_at_every_subnormal(cpu_target):
    """AVX512-BF16's vcvtneps2bf16 flushes subnormal inputs to zero; vectors
    holding one take the exact path (docs/elementwise.md). Every float32
    subnormal, each next to a normal of exponent 1 or 0x7F (so vectors mix
    both kinds), plus every NaN/inf pattern of one sign bit's mantissa stride."""
    mantissa = torch.arange(1 << 23, dtype=torch.int64)
    g = torch.Generator().manual_seed(15)
    sign = torch.randint(0, 2, (1 << 23,), generator=g, dtype=torch.int64) << 31
    normal_exponent = torch.where(torch.rand(1 << 23, generator=g) < 0.5, 1, 0x7F) << 23
    bits = torch.stack([mantissa | sign, (mantissa | normal_exponent) ^ sign.flip(0)], 1).flatten()
    bits = torch.cat([bits, mantissa[::97] | (0xFF << 23), mantissa[::89] | (0x1FF << 23)])
    x = torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32).view(torch.float32)
    assert_bitwise_equal(hetkern.cast(x, torch.bfloat16), x.to(torch.bfloat16))
    assert_bitwise_equal(hetkern.cast(x[3:], torch.bfloat16), x[3:].to(torch.bfloat16))  # shifted lanes


@pytest.mark.parametrize("op", ["cast", "scale", "add"])
def test_bfloat16_one_subnormal_anywhere_in_a_pair_of_vectors(cpu_target, op):
    """On AVX512-BF16 targets bfloat16 results are narrowed 32 at a time (two
    vectors, one vcvtne2ps2bf16, which would flush subnormals) and a pair with
    one subnormal float32 result takes the exact path: one such result at
    each of 101 positions (either vector of a pair, odd tails) among normal ones."""
    g = torch.Generator().manual_seed(16)
    base = torch.rand(64 + 37, generator=g) + 0.5
    for k in range(base.numel()):
        sign = 1 if k % 2 else -1
        x = base.clone()
        if op == "cast":
            x[k] = sign * 3.0e-39  # float32 subnormal
            assert_bitwise_equal(hetkern.cast(x, torch.bfloat16), x.to(torch.bfloat16))
        elif op == "scale":
            x[k] = sign * 2.0**-126  # the smallest normal; halved, subnormal
            xb = x.to(torch.bfloat16)
            assert_bitwise_equal(hetkern.scale(xb, 0.5), xb * 0.5)
        else:
            y = torch.zeros_like(x)
            x[k], y[k] = sign * 2.0**-125, sign * -1.875 * 2.0**-125  # sum: +-2^-128
            xb, yb = x.to(torch.bfloat16), y.to(torch.bfloat16)
            assert_bitwise_equal(hetkern.add(xb, yb), xb + yb)


def test_cast_float64_to_16_bits_rounds_through_float32_like_torch(cpu_target):
    """1 + 2^-11 + 2^-40 is above the float16 tie 1 + 2^-11, but float32 drops
    the 2^-40 and the tie then rounds to even: torch gives 1.0 (NumPy 1.001)."""
    x = torch.tensor([1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-8 + 2.0**-40], dtype=torch.float64)
    assert hetkern.cast(x, torch.float16).tolist()[0] == 1.0
    assert hetkern.cast(x, torch.bfloat16).tolist()[1] == 1.0


def test_cast_identity_copies_every_bit(cpu_target):
    for dtype in DTYPES:
        x = random_bits(torch.float64, 999, 14).view(dtype)[1:]  # NaN payloads included
        y = hetkern.cast(x, dtype)
        assert y.data_ptr() != x.data_ptr()
        assert bytes_of(y) == bytes_of(x)
        assert hetkern.cast(x, dtype, out=x) is x
        assert bytes_of(y) == bytes_of(x)


def test_cast_dtype_spellings_and_numpy():
    x = torch.linspace(-2, 2, 33, dtype=torch.float64)
    for spelling in [torch.float16, np.float16, np.dtype("float16"), "float16"]:
        y = hetkern.cast(x, spelling)
        assert y.dtype == torch.float16
        assert_bitwise_equal(y, x.half())
    assert hetkern.cast(x, "bfloat16").dtype == torch.bfloat16
    xn = np.linspace(-2, 2, 33)
    for dtype in [np.float32, np.float64, np.float16]:
        for src in [xn, xn.astype(np.float32), xn.astype(np.float16)]:
            y = hetkern.cast(src, dtype)
            assert type(y) is np.ndarray and y.dtype == dtype and y.shape == src.shape
            np.testing.assert_array_equal(y, src.astype(dtype))
    out = np.empty((33,), np.float32)
    assert hetkern.cast(xn, "float32", out=out) is out
    np.testing.assert_array_equal(out, xn.astype(np.float32))


def test_cast_out_is_checked_on_the_fast_path():
    """cast's wrapper calls the library directly for NumPy/torch arrays with a
    known dtype (docs/performance.md, call overhead): `out` of another dtype,
    shape or layout is still refused, before anything is written."""
    xt, xn = torch.linspace(-2, 2, 33), np.linspace(-2, 2, 33, dtype=np.float32)
    for x, out in [(xt, torch.zeros(33, dtype=torch.float32)), (xn, np.zeros(33, np.float32)),
                   (xt, torch.zeros(33, dtype=torch.bfloat16)), (xn, np.zeros(33, np.float64))]:
        with pytest.raises(ValueError, match="'out' has dtype"):
            hetkern.cast(x, "float16", out=out)
        assert not out.any()
    for x, out in [(xt, torch.zeros(32, dtype=torch.float16)), (xn, np.zeros(34, np.float16))]:
        with pytest.raises(ValueError, match="out"):
            hetkern.cast(x, np.float16, out=out)
        assert not out.any()
    out = torch.zeros(66, dtype=torch.float16)
    with pytest.raises(ValueError, match="contiguous"):
        hetkern.cast(xt, torch.float16, out=out[::2])
    assert not out.any()
    # the result follows the input's library whatever the spelling
    for spelling in [np.float16, np.dtype("float16"), "float16", torch.float16]:
        assert type(hetkern.cast(xt, spelling)) is torch.Tensor
    for spelling in [np.float16, np.dtype("float16"), "float16", torch.float16]:
        assert type(hetkern.cast(xn, spelling)) is np.ndarray


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5, 7), (2, 3, 4, 5)])
def test_shapes(shape):
    x, y = torch.randn(shape), torch.randn(shape)
    assert_bitwise_equal(hetkern.add(x, y), x + y)
    assert_bitwise_equal(hetkern.axpby(x, y, 2, 3), 2 * x + 3 * y)
    assert_bitwise_equal(hetkern.cast(x, torch.bfloat16), x.bfloat16())


# ---- bad input -----------------------------------------------------------


def _f32(*shape):
    return np.ones(shape, np.float32)


ERROR_CASES = [
    # (id, exception, message fragment, call(out)); out is an (8,) float32 of 7s
    ("x-list", TypeError, "'x' must be an array", lambda out: hetkern.add([1.0] * 8, _f32(8), out=out)),
    ("x-number", TypeError, "'x' must be an array", lambda out: hetkern.sub(2.0, _f32(8), out=out)),
    ("y-str", TypeError, "'y' must be an array or a real number", lambda out: hetkern.mul(_f32(8), "2", out=out)),
    ("y-complex", TypeError, "'y' must be an array or a real number", lambda out: hetkern.div(_f32(8), 1j, out=out)),
    ("y-dtype", ValueError, "'y' has dtype float64; expected float32 like 'x'", lambda out: hetkern.add(_f32(8), np.ones(8), out=out)),
    ("y-int-dtype", ValueError, "'y' has dtype int32", lambda out: hetkern.add(_f32(8), np.ones(8, np.int32), out=out)),
    ("y-shape", ValueError, r"'y' has shape \(3,\); expected the shape of 'x' \(2, 4\)", lambda out: hetkern.add(_f32(2, 4), _f32(3), out=out)),
    ("y-leading-one", ValueError, r"'y' has shape \(1, 4\)", lambda out: hetkern.add(_f32(2, 4), _f32(1, 4), out=out)),
    ("y-longer", ValueError, r"'y' has shape \(2, 8\)", lambda out: hetkern.add(_f32(8), _f32(2, 8), out=out)),
    ("y-non-contiguous", ValueError, "'y' must be contiguous", lambda out: hetkern.add(_f32(8), _f32(16)[::2], out=out)),
    ("out-shape", ValueError, r"'out' has shape \(8,\); expected \(2, 4\)", lambda out: hetkern.add(_f32(2, 4), _f32(4), out=out)),
    ("out-dtype", ValueError, "'out' has dtype float32; expected float64", lambda out: hetkern.add(np.ones(8), np.ones(8), out=out)),
    ("a-str", TypeError, "'a' must be a real number", lambda out: hetkern.axpby(_f32(8), _f32(8), "1", 2.0, out=out)),
    ("b-none", TypeError, "'b' must be a real number", lambda out: hetkern.axpby(_f32(8), _f32(8), 1.0, None, out=out)),
    ("axpby-y-number", TypeError, "'y' must be an array", lambda out: hetkern.axpby(_f32(8), 2.0, 1.0, 1.0, out=out)),
    ("axpby-y-shape", ValueError, r"'y' has shape \(3,\)", lambda out: hetkern.axpby(_f32(8), _f32(3), 1.0, 1.0, out=out)),
    ("cast-dtype-int", ValueError, "'dtype' is int32; expected one of", lambda out: hetkern.cast(_f32(8), np.int32, out=out)),
    ("cast-dtype-name", ValueError, "'dtype' is half; expected one of", lambda out: hetkern.cast(_f32(8), "half", out=out)),
    ("cast-dtype-object", TypeError, "'dtype' must be a torch.dtype", lambda out: hetkern.cast(_f32(8), object(), out=out)),
    ("cast-out-dtype", ValueError, "'out' has dtype float32; expected float16", lambda out: hetkern.cast(np.ones(8), "float16", out=out)),
    ("cast-out-shape", ValueError, r"'out' has shape \(8,\); expected \(9,\)", lambda out: hetkern.cast(np.ones(9), "float32", out=out)),
    ("cast-x-int", ValueError, "'x' has dtype int64", lambda out: hetkern.cast(np.ones(8, np.int64), "float32", out=out)),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_bad_input_raises_and_writes_nothing(case):
    _, exc, fragment, call = case
    out = np.full(8, 7.0, np.float32)
    before = bytes_of(out)
    with pytest.raises(exc, match=fragment):
        call(out)
    assert bytes_of(out) == before


def test_numpy_has_no_bfloat16():
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        hetkern.cast(np.ones(4, np.float32), "bfloat16")


def test_read_only_out():
    out = np.full(8, 7.0, np.float32)
    out.flags.writeable = False
    for call in [lambda: hetkern.add(_f32(8), 1.0, out=out), lambda: hetkern.cast(np.ones(8), "float32", out=out)]:
        with pytest.raises(ValueError, match="'out' is read-only"):
            call()
    assert (out == 7.0).all()


def test_overlaps_are_rejected():
    buf = np.arange(20, dtype=np.float32)
    before = bytes_of(buf)
    x = np.ones(8, np.float32)
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):
        hetkern.add(buf[1:9], x, out=buf[:8])
    with pytest.raises(ValueError, match="'out' partially overlaps 'y'"):
        hetkern.mul(x, buf[2:10], out=buf[:8])
    # A broadcast y inside out: writing the first row would change y.
    with pytest.raises(ValueError, match="'out' partially overlaps 'y'"):
        hetkern.add(np.ones((2, 4), np.float32), buf[:4], out=buf[:8].reshape(2, 4))
    with pytest.raises(ValueError, match="'out' partially overlaps 'y'"):
        hetkern.axpby(np.ones(8, np.float32), buf[:8], 1.0, 1.0, out=buf[4:12])
    # A cast onto its own input with another element size.
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):
        hetkern.cast(buf[:8], "float16", out=buf[:4].view(np.float16))
    assert bytes_of(buf) == before


@requires_cuda  # a CPU-only build refuses the CUDA tensor first, for want of CUDA
def test_device_mismatch():
    x, out = torch.ones(8), torch.full((8,), 7.0)
    with pytest.raises(ValueError, match="'y' is on cuda:0; expected cpu like 'x'"):
        hetkern.add(x, torch.ones(8, device="cuda"), out=out)
    with pytest.raises(ValueError, match="'out' is on cpu; expected cuda:0 like 'x'"):
        hetkern.cast(torch.ones(8, device="cuda"), torch.float32, out=out)
    assert (out == 7.0).all()


# ---- CUDA ------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_same_shape_and_broadcast(dtype):
    cases = [((n,), (n,)) for n in SIZES + [2**24 + 5]] + BROADCASTS + [((3, 8), (8,)), ((7, 4096), (4096,))]
    for x_shape, y_shape in cases:
        # Offsets cover all of: x, y, out in phase (16-byte packs of x, y and
        # out), x and out in phase but not y (y element by element), and out
        # of phase (1-lane packs; out is allocated aligned).
        for x_offset, y_offset in [(0, 0), (1, 1), (0, 3), (2, 0)]:
            x = make(x_shape, dtype, "cuda", seed=1, offset=x_offset)
            y = make(y_shape, dtype, "cuda", seed=2, offset=y_offset)
            for name, (ours, op) in OPS.items():
                result = ours(x, y)
                assert result.device == x.device and result.dtype == dtype
                assert_bitwise_equal(result, op(x, y).reshape(x.shape))
            out = torch.empty_like(x)
            hetkern.axpby(x, y, 0.3, -1.7, out=out)
            assert_bitwise_equal(out, axpby_reference(x, y, 0.3, -1.7).reshape(x.shape))


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_number_y(dtype):
    for n, offset in [(1, 0), (17, 1), (4097, 3), (2**20 + 1, 0)]:
        x = random_tensor(n, dtype, "cuda", offset=offset)
        for s in NUMBERS:
            for name, (ours, op) in OPS.items():
                assert_bitwise_equal(ours(x, s), number_reference(op, x, float(s)))


@requires_cuda
@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_cuda_every_16_bit_pattern(dtype):
    x = every_16_bit_pattern(dtype, "cuda")
    y = x[torch.randperm(x.numel(), device="cuda")]
    for name, (ours, op) in OPS.items():
        assert_bitwise_equal(ours(x, y), op(x, y))
    assert_bitwise_equal(hetkern.axpby(x, y, 0.7, -1.3), axpby_reference(x, y, 0.7, -1.3))


@requires_cuda
@pytest.mark.parametrize("out_dtype", DTYPES, ids=str)
def test_cuda_cast(out_dtype):
    inputs = [every_16_bit_pattern(torch.float16), every_16_bit_pattern(torch.bfloat16),
              random_bits(torch.float32, 1 << 15, 12), random_bits(torch.float64, 1 << 15, 13),
              special_float64(), special_float64().float()]
    for x in inputs:
        xc = x.cuda()
        expected = xc.to(out_dtype)
        assert_bitwise_equal(hetkern.cast(xc, out_dtype), expected)
        assert_bitwise_equal(expected, x.to(out_dtype))  # torch's devices agree
    for in_dtype in DTYPES:
        for n in [0, 1, 17, 4097, 2**20 + 3]:
            for offset in (0, 1, 3):
                x = random_tensor(n, in_dtype, "cuda", seed=n, offset=offset)
                assert_bitwise_equal(hetkern.cast(x, out_dtype), x.to(out_dtype))


@requires_cuda
def test_cuda_in_place():
    x = random_tensor(4099, torch.bfloat16, "cuda", offset=1)
    y = random_tensor(4099, torch.bfloat16, "cuda", seed=3, offset=1)
    expected = x * y
    assert hetkern.mul(x, y, out=x) is x
    assert_bitwise_equal(x, expected)
    rows, row = make((33, 64), torch.float32, "cuda"), make((64,), torch.float32, "cuda", seed=4)
    expected = 2.0 * rows + 0.5 * row
    assert hetkern.axpby(rows, row, 2.0, 0.5, out=rows) is rows
    assert_bitwise_equal(rows, expected)
    same = hetkern.cast(x, torch.bfloat16, out=x)
    assert same is x


@requires_cuda
def test_cuda_runs_on_current_stream():
    """On a side stream, x is filled only after a long GPU sleep; a kernel on
    any other stream would read x before the fill."""
    x = torch.zeros(1 << 20, device="cuda")
    row = torch.full((1024,), 2.0, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(3.0)
        added = hetkern.add(x.view(1024, 1024), row)
        combined = hetkern.axpby(x, x, 2.0, 1.0)
        halves = hetkern.cast(x, torch.float16)
    side.synchronize()
    assert bool((added == 5.0).all()) and bool((combined == 9.0).all()) and bool((halves == 3.0).all())


@requires_cuda
def test_cuda_graph_capture_and_replay():
    x = torch.randn(1 << 16, device="cuda")
    y = torch.randn(256, device="cuda")
    out_add, out_axpby = torch.empty_like(x), torch.empty_like(x)
    out_div, out_cast = torch.empty_like(x), torch.empty_like(x, dtype=torch.bfloat16)

    def run():
        hetkern.add(x.view(-1, 256), y, out=out_add.view(-1, 256))
        hetkern.axpby(x, x, 0.5, 2.0, out=out_axpby)
        hetkern.div(x, 3.0, out=out_div)
        hetkern.cast(x, torch.bfloat16, out=out_cast)

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run()  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    x.copy_(torch.randn_like(x))
    y.copy_(torch.randn_like(y))
    graph.replay()
    torch.cuda.synchronize()
    assert_bitwise_equal(out_add, (x.view(-1, 256) + y).view(-1))
    assert_bitwise_equal(out_axpby, 0.5 * x + 2.0 * x)
    assert_bitwise_equal(out_div, number_reference(operator.truediv, x, 3.0))
    assert_bitwise_equal(out_cast, x.bfloat16())


@requires_cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_cuda_second_device():
    x, y = torch.randn(1000, device="cuda:1"), torch.randn(1000, device="cuda:1")
    assert_bitwise_equal(hetkern.sub(x, y), x - y)
    assert hetkern.cast(x, torch.float16).device == torch.device("cuda:1")
    assert torch.cuda.current_device() == 0
