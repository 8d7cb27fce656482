"""hetkern.sum/max/dot/norm against torch (and NumPy) on every dtype, size,
alignment and CPU target, and on CUDA where a GPU is present.

Accuracy contract (docs/reduce.md): with a float64 reference,
|result - ref| <= c * eps(acc) * sum|terms| + u(out) * |ref| + tiny(out),
c = 48 + log2(n); max is the IEEE 754-2019 maximum (bit-equal to torch.amax up
to the sign of a zero maximum, which is order-dependent in torch); norm
accumulates in float64. A result beyond the dtype's range is inf.
"""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
import torch

import hetkern
from conftest import DTYPES, assert_bitwise_equal, bytes_of, requires_cuda
from opinfo import ieee_amax

SIZES = [0, 1, 3, 7, 15, 17, 31, 33, 63, 65, 127, 129, 1023, 1025, 4097]
OPS = ["sum", "max", "dot", "norm"]
# Unit roundoff of the storage type (the final rounding of the result).
UNIT = {torch.float32: 2.0**-24, torch.float64: 2.0**-53, torch.float16: 2.0**-11,
        torch.bfloat16: 2.0**-8}
TINY = {dt: torch.finfo(dt).smallest_normal * torch.finfo(dt).eps for dt in DTYPES}


def overflow_threshold(dtype):
    """The smallest magnitude that rounds to inf in `dtype`: max + ulp(max)/2
    (65520 for float16; inf for float64, whose reference cannot overflow)."""
    finfo = torch.finfo(dtype)
    return finfo.max + finfo.eps * 2.0 ** (math.frexp(finfo.max)[1] - 2)


def values(shape, dtype, device="cpu", seed=0, offset=0):
    """Random values spread over 2^-3..2^4 (in range for float16 sums),
    starting `offset` elements into a fresh buffer (misaligned start)."""
    n = math.prod(shape)
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(n + offset, generator=g, dtype=torch.float64)
    base *= torch.exp2(torch.randint(-3, 5, (n + offset,), generator=g).double())
    return base.to(dtype).to(device)[offset:].view(shape)


def call(op, x, y, axis):
    if op == "dot":
        return hetkern.dot(x, y, axis=axis)
    return getattr(hetkern, op)(x, axis=axis)


def reference(op, x, y, axis):
    """(float64 reference, bound on |error|) for sum/dot/norm; the IEEE maximum
    (torch.amax with an order-independent zero sign) for max."""
    dims = None if axis is None else -1
    xd = x.cpu().double()
    if op == "max":
        return ieee_amax(x, axis), None
    if op == "norm":
        # Not torch.linalg.vector_norm: its CPU kernel sums the squares in a few
        # vector lanes sequentially (2^24 elements: ~3e-14 relative error, more
        # than the float64 bound below); torch's sum is a cascade (~log2(n) eps).
        squares = xd * xd
        ref = torch.sqrt(squares.sum(dims) if dims is not None else squares.sum())
        # float64: <= depth/2 + 1 units of 2^-53 with depth ~59 for 2^24 elements
        # on CUDA (docs/reduce.md); other dtypes: squares exact in float64.
        acc_error = 0.0 if x.dtype != torch.float64 else 48 * 2.0**-52 * ref
        return ref, acc_error + UNIT[x.dtype] * 2 * ref + TINY[x.dtype]
    terms = xd * y.cpu().double() if op == "dot" else xd
    ref = terms.sum(dims) if dims is not None else terms.sum()
    n = x.numel() if axis is None else (x.shape[-1] if x.dim() else 1)
    eps = 2.0**-52 if x.dtype == torch.float64 else 2.0**-23
    c = 48 + math.log2(max(n, 1))
    magnitude = terms.abs().sum(dims) if dims is not None else terms.abs().sum()
    return ref, c * eps * magnitude + UNIT[x.dtype] * ref.abs() + TINY[x.dtype]


def check(op, x, y=None, axis=-1):
    got = call(op, x, y, axis)
    assert got.dtype == x.dtype and got.device == x.device
    ref, bound = reference(op, x, y, axis)
    if bound is None:
        assert_bitwise_equal(got, ref)
        return
    assert got.shape == ref.shape
    got = got.cpu().double()
    err = (got - ref).abs()
    # A result beyond the output's range rounds to ±inf (as torch's does); it
    # may where the exact result, within the accumulation bound, rounds to inf.
    overflow = got.isinf() & (got.sign() == ref.sign()) & (
        ref.abs() + bound >= overflow_threshold(x.dtype))
    ok = (err <= bound) | overflow | (got.isnan() & ref.isnan())
    assert bool(ok.all()), f"{op}: max error {err.max().item()} above bound at {(~ok).nonzero()[:3].tolist()}"


def shapes_for(n):
    return [(n,), (3, n)]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_matches_torch(cpu_target, dtype, op):
    for n in SIZES:
        for offset in (0, 1):
            for shape in shapes_for(n):
                x = values(shape, dtype, seed=n, offset=offset)
                y = values(shape, dtype, seed=n + 1, offset=offset + 1)
                for axis in (-1, None):
                    if op == "max" and n == 0:
                        continue
                    check(op, x, y, axis)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_huge_rows(cpu_target, dtype, op):
    for shape in [(65536 * 3 + 5,), (2, 70001)]:
        x = values(shape, dtype, seed=7, offset=3)
        y = values(shape, dtype, seed=8)
        check(op, x, y, -1)
        check(op, x, y, None)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_target_gives_the_same_bits(dtype, op):
    """The order does not depend on the SIMD width (docs/reduce.md)."""
    x = values((5, 2 * 4096 + 77), dtype, seed=3, offset=1)
    y = values((5, 2 * 4096 + 77), dtype, seed=4)
    results = []
    try:
        for target in hetkern.available_cpu_targets():
            hetkern.set_cpu_target(target)
            results.append((call(op, x, y, -1), call(op, x[:, :37].contiguous(), y[:, :37].contiguous(), None)))
    finally:
        hetkern.set_cpu_target(None)
    for rows, whole in results[1:]:
        assert_bitwise_equal(rows, results[0][0])
        assert_bitwise_equal(whole, results[0][1])


@pytest.mark.parametrize("op", ["sum", "dot"])
def test_16bit_sums_follow_the_fixed_order_on_every_target(cpu_target, op):
    """16-bit results hide most float32 rounding, so this builds rows whose
    result depends on the order of docs/reduce.md: 1 + h in virtual lane 0
    (elements 0 and 32; h half an ulp of 1 in the dtype), 2^-24 twice in
    lane L. Added together first (the fixed order: element i goes to lane
    i % 32 in index order, lanes fold at the end), the two make 2^-23 and
    the sum 1 + h + 2^-23 rounds up to 1 + 2h; added to 1 + h one by one,
    each is a float32 tie lost to even, and 1 + h rounds to 1. The second
    2^-24 sits in a later full group, in the partial group at the row's end,
    or in a later leaf; the 512-bit targets take bfloat16 groups split by
    parity (kSplitGroups) and must put every element in its lane all the
    same."""
    for dtype in (torch.bfloat16, torch.float16):
        half_ulp = torch.finfo(dtype).eps / 2
        for lane in (1, 2, 14, 15, 16, 17, 30, 31):
            for second, n in ((lane + 64, 109), (96 + lane % 13, 109), (1024 + lane, 2048),
                              (2048 + lane % 13, 2061)):
                row = torch.zeros(n, dtype=torch.float64)
                row[0], row[32] = 1.0, half_ulp
                row[lane] = row[second] = 2.0**-24
                if second % 32 != lane:  # the tail's own lane: move the first 2^-24 there
                    row[lane] = 0.0
                    row[second % 32] = 2.0**-24
                x = row.to(dtype)
                assert bool((x.double() == row).all())
                want = torch.tensor(1.0 + 2 * half_ulp, dtype=dtype)
                assert_bitwise_equal(call(op, x, torch.ones_like(x), None), want)
                got_rows = call(op, x.repeat(3, 1), torch.ones_like(x).repeat(3, 1), -1)
                assert_bitwise_equal(got_rows, want.repeat(3))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rows_streamed_from_memory_equal_rows_in_cache(cpu_target, dtype, op):
    """Calls of more than 4 MiB take the leaves one after another, smaller ones
    side by side (src/cpu/reduce.cc): each row's bits are the same either way."""
    x = values((640, 4096 + 5), dtype, seed=11)[:, :4096]  # 640 rows of 4 to 8 leaves, > 4 MiB
    y = values((640, 4096 + 5), dtype, seed=12)[:, 5:]
    x, y = x.contiguous(), y.contiguous()
    streamed = call(op, x, y, -1)
    for r in range(0, 640, 7):
        assert_bitwise_equal(streamed[r], call(op, x[r], y[r], None))


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_threaded_results_equal_single_threaded(threads):
    cases = [((1_000_003,), None), ((3, 150_001), -1), ((2000, 300), -1), ((2, 100_001), -1)]
    for shape, axis in cases:
        for dtype in (torch.float32, torch.bfloat16, torch.float64):
            x = values(shape, dtype, seed=threads)
            y = values(shape, dtype, seed=threads + 1)
            for op in OPS:
                try:
                    hetkern.set_num_threads(1)
                    single = call(op, x, y, axis)
                    hetkern.set_num_threads(threads)
                    threaded = call(op, x, y, axis)
                finally:
                    hetkern.set_num_threads(0)
                assert_bitwise_equal(threaded, single)


def test_max_propagates_nan_and_handles_infinities(cpu_target):
    for n in (1, 17, 1025, 70000):
        for pos in {0, n // 2, n - 1}:
            x = values((n,), torch.float32, seed=pos)
            x[pos] = float("nan")
            assert torch.isnan(hetkern.max(x)), (n, pos)
            assert_bitwise_equal(hetkern.max(x.bfloat16()), torch.amax(x.bfloat16()))
        inf = torch.full((2, n), -float("inf"))
        assert_bitwise_equal(hetkern.max(inf), torch.amax(inf, -1))
        inf[1, n // 3] = float("inf")
        assert_bitwise_equal(hetkern.max(inf), torch.amax(inf, -1))


NAN_PATTERNS = {  # (int dtype, exponent bits, mantissa bits)
    torch.bfloat16: (torch.int16, 0x7F80, 0x007F), torch.float16: (torch.int16, 0x7C00, 0x03FF),
    torch.float32: (torch.int32, 0x7F800000, 0x007FFFFF),
    torch.float64: (torch.int64, 0x7FF0000000000000, 0x000FFFFFFFFFFFFF)}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_max_of_a_row_holding_any_nan_is_nan(cpu_target, dtype):
    """Every NaN of a 16-bit dtype (both signs, every payload; a sample of
    payloads for float32/float64), in a row of finite values and +-inf,
    makes the row's max NaN: the order keys put negative NaNs above +inf by
    a wrapping subtraction (src/cpu/reduce.cc), which this checks for each
    dtype's exponent width, in rows and in a whole-array max."""
    itype, exponent, mantissa = NAN_PATTERNS[dtype]
    if dtype.itemsize == 2:
        payloads = torch.arange(1, mantissa + 1, dtype=torch.int64)
    else:
        payloads = torch.tensor([1, 2, mantissa >> 1, (mantissa >> 1) + 1, mantissa - 1, mantissa])
    sign = -(1 << (8 * dtype.itemsize - 1))  # the sign bit, as a negative integer
    patterns = torch.cat([exponent + payloads, sign + exponent + payloads]).to(itype)
    nans = patterns.view(dtype)
    assert bool(nans.isnan().all())
    n = 67
    x = values((nans.numel(), n), dtype, seed=7)
    x[::2, 5] = float("inf")
    x[1::4, 9] = -float("inf")
    positions = torch.arange(nans.numel()) * 13 % n
    x[torch.arange(nans.numel()), positions] = nans
    assert bool(hetkern.max(x).isnan().all())
    for r in range(0, nans.numel(), max(1, nans.numel() // 16)):
        row = values((4, 1000), dtype, seed=r)
        row[r % 4, (r * 7) % 1000] = nans[r]
        assert bool(hetkern.max(row, axis=None).isnan())


def signed_zero_rows(n):
    """Rows of n elements whose maximum is a zero: +0 and -0 in several
    positions and orders (the answer is +0), and -0 alone (the answer is -0)."""
    pairs = {(0, n - 1), (n - 1, 0), (n // 2, n // 3), (n // 3, n // 2), (1, 0), (0, 1)}
    rows = []
    for positive, negative in sorted(p for p in pairs if p[0] != p[1] and max(p) < n):
        row = torch.full((n,), -float("inf"), dtype=torch.float64)
        row[negative] = -0.0
        row[positive] = 0.0
        rows.append((row, 0.0))
    only_negative = torch.full((n,), -1.0, dtype=torch.float64)
    only_negative[n // 2] = -0.0
    rows.append((only_negative, -0.0))
    return rows


def check_signed_zeros(device):
    for n in (2, 3, 17, 33, 1025, 20000, 70001):
        for row, expected in signed_zero_rows(n):
            for dtype in DTYPES:
                x = row.to(dtype).to(device)
                want = torch.tensor(expected, dtype=dtype, device=device)
                assert_bitwise_equal(hetkern.max(x), want)
                assert_bitwise_equal(hetkern.max(x.view(1, n)), want.view(1))
                if n > 8:  # a whole-array max across rows
                    assert_bitwise_equal(hetkern.max(x[: n - n % 4].view(4, -1), axis=None),
                                         ieee_amax(x[: n - n % 4], None))


def test_max_of_signed_zeros_is_positive_zero(cpu_target):
    """max(+0, -0) = +0 in any order (IEEE 754-2019 maximum), although
    torch.amax returns whichever zero its order meets first."""
    check_signed_zeros("cpu")


def overflow_cases(dtype):
    """(op, x, y, expected) around the overflow threshold max + ulp(max)/2
    (65520 for float16): the exact result rounded once."""
    big = torch.finfo(dtype).max
    half_ulp = overflow_threshold(dtype) - big
    t = lambda *v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    cases = [
        ("sum", t(big, half_ulp), None, math.inf),  # exactly halfway: ties to even, inf
        ("sum", -t(big, half_ulp), None, -math.inf),
        ("sum", t(big, half_ulp * 0.96875), None, big),  # just below: rounds to max
        ("dot", t(big, 2.0), t(1.0, big / 2), math.inf),
        ("dot", t(big, big, big), t(0.5, 0.5, -0.5), big / 2),
    ]
    if dtype == torch.float16:
        # Partial sums far beyond 65504 stay exact in the float32 accumulator.
        ones = torch.ones(1000, dtype=torch.float64)
        cases.append(("sum", torch.cat([big * ones, -big * ones[1:]]), None, big))
        cases.append(("dot", torch.cat([big * ones, big * ones[1:]]),
                      torch.cat([ones, -ones[1:]]), big))
    return cases


def check_overflow(device):
    for dtype in (torch.float16, torch.bfloat16):
        for op, x, y, expected in overflow_cases(dtype):
            x = x.to(dtype).to(device)
            y = None if y is None else y.to(dtype).to(device)
            want = torch.tensor(expected, dtype=torch.float64).to(dtype).to(device)
            assert_bitwise_equal(call(op, x, y, -1), want)
            assert_bitwise_equal(call(op, x.repeat(3, 1), None if y is None else y.repeat(3, 1), -1),
                                 want.repeat(3))


def test_16bit_results_overflow_exactly_when_the_exact_result_does(cpu_target):
    check_overflow("cpu")


def test_specials_propagate(cpu_target):
    x = values((3, 1000), torch.float32)
    x[0, 5], x[1, 999], x[2, 0] = float("inf"), float("nan"), -float("inf")
    assert_bitwise_equal(hetkern.sum(x), x.sum(-1))
    assert_bitwise_equal(hetkern.norm(x), torch.linalg.vector_norm(x, dim=-1))
    assert torch.isnan(hetkern.dot(x, torch.zeros_like(x))[0])  # inf * 0


def test_norm_float32_neither_overflows_nor_underflows(cpu_target):
    big = torch.tensor([3e30, 4e30], dtype=torch.float32)
    small = torch.tensor([3e-30, 4e-30], dtype=torch.float32)
    assert_bitwise_equal(hetkern.norm(big), torch.tensor(5e30, dtype=torch.float32))
    assert_bitwise_equal(hetkern.norm(small), torch.tensor(5e-30, dtype=torch.float32))
    assert_bitwise_equal(hetkern.norm(torch.tensor([6e4, 8e4]).bfloat16()),
                         torch.tensor(1e5).bfloat16())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_in_numpy_out(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 1001)).astype(dtype)
    y = rng.standard_normal((4, 1001)).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for got, expected in [
        (hetkern.sum(x), np.sum(x, -1)),
        (hetkern.max(x), np.max(x, -1)),
        (hetkern.dot(x, y), np.einsum("ij,ij->i", x, y)),
        (hetkern.norm(x), np.linalg.norm(x, axis=-1)),
        (hetkern.sum(x, axis=None), np.sum(x)),
    ]:
        assert type(got) is np.ndarray and got.dtype == dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * 40)
    np.testing.assert_array_equal(hetkern.max(x, axis=None), np.max(x))


@pytest.mark.parametrize("shape", [(), (5,), (0,), (0, 4), (3, 0), (2, 0, 3), (4, 1), (2, 3, 5)])
def test_shapes_and_empty_rows(shape):
    x = values(shape, torch.float32, seed=1)
    for axis in (-1, None, max(len(shape) - 1, 0) if shape else -1):
        torch_axis = () if axis is None else -1
        assert hetkern.sum(x, axis=axis).shape == x.sum(torch_axis).shape
        assert_bitwise_equal(hetkern.norm(torch.zeros_like(x), axis=axis), torch.zeros_like(x.sum(torch_axis)))
        check("sum", x, axis=axis)
        check("dot", x, x, axis=axis)
        if x.numel() and (axis is None or x.shape[-1:] != (0,)):
            check("max", x, axis=axis)


def test_out_is_returned_and_written():
    x = values((6, 33), torch.bfloat16)
    out = torch.empty(6, dtype=torch.bfloat16)
    assert hetkern.sum(x, out=out) is out
    check("sum", x)
    scalar = torch.empty((), dtype=torch.bfloat16)
    assert hetkern.max(x, axis=None, out=scalar) is scalar
    assert_bitwise_equal(scalar, torch.amax(x))


# ---- bad input ---------------------------------------------------------------

OUT = lambda: torch.full((4,), 7.0)  # noqa: E731
X = lambda: torch.ones(4, 8)  # noqa: E731
ERRORS = [
    ("list-x", TypeError, "'x' must be an array", lambda o: hetkern.sum([1.0], out=o)),
    ("none-y", TypeError, "'y' must be an array", lambda o: hetkern.dot(X(), None, out=o)),
    ("axis-str", TypeError, "'axis' must be an int or None", lambda o: hetkern.sum(X(), axis="1", out=o)),
    ("axis-0", ValueError, r"'axis' is 0; expected -1 \(the last dimension, also 1\)", lambda o: hetkern.norm(X(), axis=0, out=o)),
    ("int-dtype", ValueError, "'x' has dtype int32", lambda o: hetkern.sum(torch.ones(4, 8, dtype=torch.int32), out=o)),
    ("y-shape", ValueError, r"'y' has shape \(4, 9\); expected \(4, 8\)", lambda o: hetkern.dot(X(), torch.ones(4, 9), out=o)),
    ("y-dtype", ValueError, "'y' has dtype float64", lambda o: hetkern.dot(X(), torch.ones(4, 8).double(), out=o)),
    ("out-shape", ValueError, r"'out' has shape \(4,\); expected \(5,\)", lambda o: hetkern.sum(torch.ones(5, 8), out=o)),
    ("out-shape-none", ValueError, r"'out' has shape \(4,\); expected \(\)", lambda o: hetkern.sum(X(), axis=None, out=o)),
    ("out-dtype", ValueError, "'out' has dtype float32; expected float64", lambda o: hetkern.max(X().double(), out=o)),
    ("max-empty", ValueError, "max of an empty row is undefined", lambda o: hetkern.max(torch.ones(4, 0), out=o)),
    ("max-empty-all", ValueError, "max of an empty row is undefined", lambda o: hetkern.max(torch.ones(0), axis=None, out=o[0])),
    ("non-contiguous", ValueError, "'x' must be contiguous", lambda o: hetkern.sum(torch.ones(8, 4).t(), out=o)),
    ("out-overlaps-x", ValueError, "'out' overlaps 'x'", lambda o: hetkern.sum(o.view(4, 1), out=o)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_bad_input_raises_and_writes_nothing(case):
    _, exc, fragment, fn = case
    out = OUT()
    before = bytes_of(out)
    with pytest.raises(exc, match=fragment):
        fn(out)
    assert bytes_of(out) == before


def test_read_only_out_is_refused():
    out = np.full(4, 7.0, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="'out' is read-only"):
        hetkern.sum(np.ones((4, 8), np.float32), out=out)
    assert (out == 7.0).all()


# ---- CUDA ------------------------------------------------------------------

CUDA_SIZES = SIZES + [8191, 8192, 8193, 3 * 8192 + 5, 100_003]


@requires_cuda
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_torch(dtype, op):
    for n in CUDA_SIZES:
        for offset in (0, 1):
            for shape in shapes_for(n):
                x = values(shape, dtype, "cuda", seed=n, offset=offset)
                y = values(shape, dtype, "cuda", seed=n + 1, offset=offset + 1)  # other phase
                y_same = values(shape, dtype, "cuda", seed=n + 2, offset=offset)
                for axis in (-1, None):
                    if op == "max" and n == 0:
                        continue
                    check(op, x, y, axis)
                    if op == "dot":
                        check(op, x, y_same, axis)


@requires_cuda
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_huge_and_deterministic(dtype, op):
    for shape in [(2**24 + 5,), (3, 1_000_003), (4096, 2049)]:
        x = values(shape, dtype, "cuda", seed=5, offset=1)
        y = values(shape, dtype, "cuda", seed=6, offset=1)
        for axis in (-1, None):
            check(op, x, y, axis)
            assert_bitwise_equal(call(op, x, y, axis), call(op, x, y, axis))


@requires_cuda
def test_cuda_max_nan_and_specials():
    x = values((4, 20000), torch.float32, "cuda")
    x[0, 7], x[1, 19999], x[2, 10000] = float("nan"), float("nan"), float("inf")
    assert_bitwise_equal(hetkern.max(x), torch.amax(x, -1))
    assert_bitwise_equal(hetkern.max(x, axis=None), torch.amax(x))
    big = torch.tensor([3e30, 4e30], device="cuda")
    assert_bitwise_equal(hetkern.norm(big), torch.tensor(5e30, device="cuda"))


@requires_cuda
def test_cuda_max_of_signed_zeros_is_positive_zero():
    check_signed_zeros("cuda")


@requires_cuda
def test_cuda_16bit_results_overflow_exactly_when_the_exact_result_does():
    check_overflow("cuda")


@requires_cuda
def test_cuda_shapes_and_empty():
    for shape in [(), (0,), (0, 4), (3, 0), (4, 1)]:
        x = values(shape, torch.float32, "cuda")
        check("sum", x)
        check("norm", x, axis=None)


@requires_cuda
def test_cuda_runs_on_current_stream():
    x = torch.zeros(1 << 20, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(2.0)
        total = hetkern.sum(x, axis=None)  # two-stage: scratch on the side stream too
        rows = hetkern.max(x.view(1024, 1024))
    side.synchronize()
    assert total.item() == 2.0 * (1 << 20)
    assert bool((rows == 2.0).all())


@requires_cuda
def test_cuda_graph_capture_and_replay():
    x = torch.randn(3, 100_000, device="cuda")
    out = torch.empty(3, device="cuda")
    whole = torch.empty((), device="cuda")
    scratch = torch.empty(3 * 13, dtype=torch.float64, device="cuda")
    run = hetkern._lib.module.sum
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run(out, x, -1, scratch)  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run(out, x, -1, scratch)
        hetkern.norm(x, axis=None, out=whole)  # scratch from torch's allocator, graph pool
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    check("sum", x)
    ref, bound = reference("sum", x, None, -1)
    assert bool(((out.cpu().double() - ref).abs() <= bound).all())
    ref, bound = reference("norm", x, None, None)
    assert abs(whole.item() - ref.item()) <= bound.item()


class ArrayAPIOnly:
    """A CUDA torch tensor seen only through DLPack and a minimal array-API
    namespace: TVM-FFI gets no allocator from it (no torch exchange API)."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.shape, self.dtype, self.device = tensor.shape, tensor.dtype, tensor.device

    def __dlpack__(self, **kwargs):
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __array_namespace__(self):
        empty = lambda shape, dtype, device: ArrayAPIOnly(torch.empty(shape, dtype=dtype, device=device))  # noqa: E731
        return types.SimpleNamespace(float64=torch.float64, empty=empty)


@requires_cuda
def test_cuda_scratch_is_checked():
    x = torch.ones(2, 9000, device="cuda")
    out = torch.full((2,), 7.0, device="cuda")
    # torch callers: the library takes the scratch from torch's allocator.
    hetkern._lib.module.sum(out, x, -1, None)
    assert out.tolist() == [9000.0, 9000.0]
    out.fill_(7.0)
    # Without an environment allocator the caller must pass it.
    with pytest.raises(ValueError, match="'scratch' is required"):
        hetkern._lib.module.sum(ArrayAPIOnly(out), ArrayAPIOnly(x), -1, None)
    with pytest.raises(ValueError, match="expected float64 with at least 4 elements"):
        hetkern._lib.module.sum(out, x, -1, torch.empty(3, dtype=torch.float64, device="cuda"))
    assert bool((out == 7.0).all())


@requires_cuda
def test_cuda_scratch_from_the_callers_array_library():
    # The Python wrapper allocates it with the caller's library when TVM-FFI
    # has no allocator for it.
    x = torch.randn(3, 20_000, device="cuda", generator=torch.Generator("cuda").manual_seed(5))
    for axis in (-1, None):
        got = hetkern.sum(ArrayAPIOnly(x), axis=axis)
        assert isinstance(got, ArrayAPIOnly)
        ref, bound = reference("sum", x, None, axis)
        assert bool(((got.tensor.cpu().double() - ref).abs() <= bound).all())