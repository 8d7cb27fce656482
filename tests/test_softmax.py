"""hetkern.softmax / log_softmax against torch and a float64 reference on every
dtype, row length, alignment and CPU target, and on CUDA where a GPU is present.

Tolerances (docs/softmax.md): float32/float64 are compared with reference():
float64 for float32, long double for float64 (torch's float64 result is off
by up to 1.5x these bounds, so it cannot be the reference for float64)
    softmax:     |y - ref| <= eps * (8 + |x - max|) * ref + tiny
    log_softmax: |y - ref| <= eps * (8 + |x - max| + |ref|)
where |x - max| accounts for rounding x - max before exp (torch shares it);
float16/bfloat16 must lie within 1 ulp of the float64 reference rounded to
the storage type. Special rows (NaN, +inf, all -inf) must give NaN exactly where
torch does, and -inf/0 exactly where torch does.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

import hetkern
from conftest import DTYPES, assert_bitwise_equal, bytes_of, random_tensor, requires_cuda

OPS = [(hetkern.softmax, torch.softmax), (hetkern.log_softmax, torch.log_softmax)]
OP_IDS = ["softmax", "log_softmax"]
LENGTHS = [1, 3, 7, 15, 17, 31, 33, 63, 65, 127, 129, 1023, 1025, 4097]
HUGE = 65536 + 7
INF, NAN = float("inf"), float("nan")


@pytest.fixture(autouse=True, scope="module")
def _torch_single_threaded():
    """torch only computes references here; its thread pool waking for every
    tiny reference call costs milliseconds on a loaded machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _ordered(t: torch.Tensor) -> torch.Tensor:
    """16-bit floats as integers whose difference counts ulps (+0 == -0)."""
    bits = t.view(torch.int16).to(torch.int32)
    return torch.where(bits < 0, -(bits & 0x7FFF), bits)


def reference(x: torch.Tensor, log: bool) -> np.ndarray:
    """softmax / log_softmax of x (on the CPU) in float64, or in long double
    for float64 x: torch's float64 result is no reference for float64 (it is
    off by up to 1.5x the bound below). log(sum) as log1p((ones - 1) + rest),
    ones counting the entries equal to the max, rest summing the others:
    log(1 + tiny) rounds the tiny part away, and at a dominating max it is the
    whole result (float64 log misses up to 2^-53 of it)."""
    wide = np.longdouble if x.dtype == torch.float64 else np.float64
    xw = x.double().numpy().astype(wide).reshape(-1, x.shape[-1] if x.ndim else 1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shifted = xw - xw.max(-1, keepdims=True)
        e = np.exp(shifted)
        is_max = shifted == 0
        ones = is_max.sum(-1, keepdims=True)
        rest = np.where(is_max, 0, e).sum(-1, keepdims=True)
        y = shifted - np.log1p((ones - 1) + rest) if log else e / (ones + rest)
    return y.reshape(x.shape)


def check(y, x, torch_op):
    """y = torch_op(x, -1) within the documented tolerance (module docstring)."""
    y = torch.as_tensor(y).cpu()
    x = torch.as_tensor(x).cpu()
    assert y.dtype == x.dtype and y.shape == x.shape
    if x.numel() == 0:
        return
    expected = torch_op(x, -1)
    xd = x.double().reshape(-1, 1 if x.ndim == 0 else x.shape[-1])
    # |x - max|: exp's argument is rounded to the compute type (as in torch).
    shift = (xd - xd.amax(-1, keepdim=True)).abs().nan_to_num(posinf=0.0).reshape(x.shape)
    # Where torch gives NaN or an infinity, so must we, bit for bit.
    special = ~torch.isfinite(expected)
    assert_bitwise_equal(y[special], expected[special])
    assert bool(torch.isfinite(y[~special]).all()), "non-finite result where torch's is finite"
    regular = (~special).numpy()
    ref = reference(x, torch_op is torch.log_softmax)[regular]
    y, shift = y[~special], shift[~special].numpy()
    if x.dtype in (torch.float16, torch.bfloat16):
        # Against the float64 reference in the storage type, not torch's own
        # 16-bit result: torch's CPU float16 log_softmax is off by up to ~64 ulps.
        ulps = (_ordered(y) - _ordered(torch.from_numpy(ref).to(x.dtype))).abs()
        worst = int(ulps.max()) if ulps.numel() else 0
        assert worst <= 1, f"{worst} ulps from the float64 reference"
        return
    err = np.abs(y.double().numpy().astype(ref.dtype) - ref)
    tol = tolerance(x.dtype, ref, shift, torch_op is torch.log_softmax)
    bad = err > tol
    assert not bool(bad.any()), (
        f"{int(bad.sum())} elements beyond tolerance; worst err/tol {float((err / tol).max()):.2f}"
    )


def check_sampled_rows(y, x, torch_op, special_rows=8, stride=7):
    """check() on the first special_rows rows (where the tests put their
    special values), every stride-th row after them and the last row; every
    row after the special ones, on x's device, against torch_op in float64
    there, within 2 ulps (16-bit) or 4x the bound (wider types; torch's
    float64 result is off by up to 1.5x it): a row written from another
    row's data, or not at all, fails. The float64 CPU reference of every
    row had made the many-rows tests the CUDA suite's last (stop 68)."""
    rows = x.shape[0]
    picked = sorted(set(range(min(special_rows, rows))) | set(range(special_rows, rows, stride)) | {rows - 1})
    check(y[picked], x[picked], torch_op)
    if rows <= special_rows:
        return
    x, y = x[special_rows:], y[special_rows:]
    xd = x.double()
    ref = torch_op(xd, -1)
    if x.element_size() == 2:
        worst = int((_ordered(y) - _ordered(ref.to(x.dtype))).abs().max())
        assert worst <= 2, f"{worst} ulps from torch's float64 result"
        return
    shift = (xd - xd.amax(-1, keepdim=True)).abs()
    tol = tolerance(x.dtype, ref, shift, torch_op is torch.log_softmax)
    ratio = float(((y.double() - ref).abs() / tol).max())
    assert ratio <= 4, f"{ratio:.2f}x the bound from torch's float64 result"


def tolerance(dtype, ref, shift, log):
    """The bound on |y - ref| for float32/float64 (module docstring), given
    the reference and |x - max| element by element (NumPy arrays, or torch
    tensors on any device)."""
    eps = torch.finfo(dtype).eps
    if log:
        return eps * (8 + shift + abs(ref))
    tiny = torch.finfo(dtype).smallest_normal  # results below it are subnormal
    return eps * (8 + shift) * ref + tiny * eps * 4


def spanning_rows(n_rows, length, dtype, seed):
    """Rows spanning [max - 110, max] evenly, a random max in -20..20 per row
    at a random place: every term from 1 down to subnormal softmax results."""
    g = torch.Generator().manual_seed(seed)
    top = torch.rand(n_rows, 1, generator=g, dtype=torch.float64) * 40 - 20
    depth = torch.rand(n_rows, length, generator=g, dtype=torch.float64) * 110
    depth[torch.arange(n_rows), torch.randint(length, (n_rows,), generator=g)] = 0.0
    return (top - depth).to(dtype)


def rows_of(n_rows, length, dtype, device="cpu", seed=0, offset=0, wide=False):
    """(n_rows, length) values starting `offset` elements into a buffer:
    randn * 4 (a realistic spread), or random_tensor's 2^-20..2^20 magnitudes."""
    n = n_rows * length
    if wide:
        flat = random_tensor(n, dtype, device, seed, offset)
    else:
        g = torch.Generator().manual_seed(seed)
        flat = (torch.randn(n + offset, generator=g, dtype=torch.float64) * 4).to(dtype).to(device)[offset:]
    return flat.view(n_rows, length)


# ---- CPU ---------------------------------------------------------------------


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_lengths_and_offsets(cpu_target, dtype, op):
    ours, theirs = op
    for length in LENGTHS:
        for offset in (0, 1):
            x = rows_of(3, length, dtype, seed=length, offset=offset)
            check(ours(x), x, theirs)
        x = rows_of(2, length, dtype, seed=length + 1, wide=True)
        check(ours(x), x, theirs)


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_huge_rows(cpu_target, dtype, op):
    ours, theirs = op
    x = rows_of(2, HUGE, dtype, seed=7, offset=1)
    check(ours(x), x, theirs)


@pytest.mark.parametrize("length", [64, 1000, 20000])
def test_cpu_bfloat16_subnormal_results_among_normal_rows(cpu_target, length):
    """softmax rows whose outputs are bfloat16 subnormals (entries 87-92 below
    the max: exp in [2^-133, 2^-126)) among rows of normal outputs: the
    native narrowing of AVX512-BF16 targets flushes subnormal inputs, so its
    check must catch these; every row within 1 ulp of the reference, in one
    thread (grouped rows, one segment, several segments)."""
    g = torch.Generator().manual_seed(length)
    x = (torch.randn(8, length, generator=g, dtype=torch.float64) * 3)
    x[1::2] = -87 - 5 * torch.rand(4, length, generator=g, dtype=torch.float64)
    x[1::2, 0] = 0.0  # the max: the others' exps are bfloat16 subnormals
    x = x.to(torch.bfloat16)
    threads = hetkern.num_threads()
    hetkern.set_num_threads(1)
    try:
        y = hetkern.softmax(x)
    finally:
        hetkern.set_num_threads(threads)
    check(y, x, torch.softmax)
    tiny = torch.finfo(torch.bfloat16).smallest_normal
    assert int(((y[1::2].abs() < tiny) & (y[1::2] != 0)).sum()) > length  # subnormals there


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_special_values(cpu_target, dtype):
    rows = torch.tensor(
        [
            [1.0, -INF, 2.0, -INF, 0.5, 3.0, -1.0],  # masked entries -> probability 0
            [-INF] * 7,  # all masked -> NaN
            [1.0, INF, 2.0, 0.0, 0.0, 0.0, 0.0],  # +inf -> NaN
            [1.0, NAN, 2.0, 0.0, 0.0, 0.0, 0.0],  # NaN propagates
            [INF, -INF, INF, 1.0, 1.0, 1.0, 1.0],
            [-INF, -INF, -INF, -INF, -INF, -INF, 5.0],  # one survivor -> exactly 1
            [-80.0, 0.0, -100.0, -200.0, 0.0, -1e4, -60.0],  # exp underflow
        ],
        dtype=torch.float64,
    ).to(dtype)
    # Also as long rows: the special value sits in the vector part, the tail,
    # and another segment.
    long_rows = torch.randn(4, 9001, dtype=torch.float64).to(dtype)
    long_rows[0, 5] = NAN
    long_rows[1, 9000] = INF
    long_rows[2, :] = -INF
    long_rows[3, ::3] = -INF
    for x in (rows, long_rows):
        for ours, theirs in OPS:
            check(ours(x), x, theirs)
    assert_bitwise_equal(hetkern.softmax(rows)[5], torch.tensor([0.0] * 6 + [1.0]).to(dtype))


def check_dominating_max(dtype, device):
    """Rows whose max exceeds every other entry by 4..60 (some with a tied
    max): the sum of exp(x - max) is ones + tiny, and log_softmax at the max
    is -log1p(tiny), which log of a rounded sum loses (the first GPU run:
    bfloat16 [-0.68, -0.12, 12.5] 2 ulps off on CUDA and CPU). Lengths: warp
    path, block path / two CPU segments, and on CUDA cluster rows (20000:
    4-block clusters of one (max, sum) reduction, each warp's sum rebased to
    the row's max; 40000: the max, then the sum)."""
    gaps = torch.arange(4.0, 61.0, 2.0, dtype=torch.float64)
    g = torch.Generator().manual_seed(5)
    for length in (3, 40, 1500, 5000) + ((20000, 40000) if device == "cuda" else ()):
        x = 7.25 - gaps[:, None] - 3 * torch.rand(len(gaps), length, generator=g, dtype=torch.float64)
        at_max = torch.arange(len(gaps)) * 7919 % length  # anywhere: vector part, tail, 2nd segment
        x[torch.arange(len(gaps)), at_max] = 7.25
        x[::3, (at_max[::3] + 1) % length] = 7.25  # ties: ones = 2
        x = x.to(dtype)
        for ours, theirs in OPS:
            y = ours(x.to(device)).cpu()
            check(y, x, theirs)
        # float32/float64 log_softmax at the max, relatively (check()'s bound
        # is absolute there): tiny = sum of exp(d), d = x - max rounded to
        # |d| eps / 2, so tiny is off by up to max|d| eps / 2 plus exp's and
        # the sum's few ulps; log1p keeps a relative error, rounding adds 1/2.
        if dtype in (torch.float32, torch.float64):
            rows = torch.arange(1, len(gaps), 3)  # no tie
            got = y[rows, at_max[rows]].double().numpy()
            ref = reference(x, log=True)[rows.numpy(), at_max[rows].numpy()]
            spread = (x[rows].double().amax(-1) - x[rows].double().amin(-1)).numpy()
            eps = torch.finfo(dtype).eps
            bound = eps * (4 + spread / 2) * np.abs(ref)
            assert (np.abs(got - ref) <= bound).all(), (got, ref)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_dominating_max(cpu_target, dtype):
    check_dominating_max(dtype, "cpu")


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 5), (2, 0, 4), (), (1,), (4, 1), (2, 3, 5)])
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_shapes(shape, op):
    ours, theirs = op
    x = torch.randn(shape)
    y = ours(x)
    assert y.shape == x.shape and y.dtype == x.dtype
    check(y, x, theirs)


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_in_place(cpu_target, op):
    ours, theirs = op
    for dtype in (torch.bfloat16, torch.float32):  # exps recomputed / kept in out
        for rows, length in ((2, 17), (2, 4097), (1, HUGE)):  # one long row: split among threads
            x = rows_of(rows, length, dtype, offset=1)
            x_copy = x.clone()
            assert ours(x, out=x) is x
            check(x, x_copy, theirs)


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_out_is_returned_and_written(op):
    ours, theirs = op
    x = torch.randn(3, 33)
    out = torch.full_like(x, 7.0)
    assert ours(x, out=out) is out
    check(out, x, theirs)


@pytest.mark.parametrize("length", [1, 7, 33, 1025])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_in_numpy_out(cpu_target, dtype, length):
    x = np.random.default_rng(length).standard_normal((3, length + 1)).astype(dtype)[:, 1:].copy()
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=-1, keepdims=True)
    eps = np.finfo(dtype).eps
    y = hetkern.softmax(x)
    assert type(y) is np.ndarray and y.dtype == dtype and y.shape == x.shape
    np.testing.assert_allclose(y, e / s, rtol=eps * (16 + np.abs(shifted).max()), atol=0)
    ly = hetkern.log_softmax(x)
    assert type(ly) is np.ndarray and ly.dtype == dtype
    np.testing.assert_allclose(ly, shifted - np.log(s), rtol=0, atol=eps * (16 + 2 * np.abs(shifted).max()))


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_row_groups_give_each_rows_own_bits(cpu_target, dtype, op):
    """Short rows go four at a time, pass by pass (src/cpu/softmax.cc,
    OneSegmentRows: 16-bit rows up to 256 elements, float32/float64 up to
    64; for log_softmax 16-bit up to 1024, float32 up to 512, and rows up
    to 64 eight at a time first); each row must come out as it does alone,
    special rows (NaN, +inf, all -inf) inside a group included, in place
    and row-strided too. 13 rows: a group of 8, one of 4, one row alone."""
    ours, _ = op
    for cols in (1, 17, 64, 65, 255, 256, 257, 512, 513, 1024, 1025):
        x = rows_of(13, cols, dtype, seed=cols)
        x[1, cols // 2] = NAN
        x[2, 0] = INF
        x[5] = -INF
        alone = torch.stack([ours(x[r:r + 1])[0] for r in range(x.shape[0])])
        assert_bitwise_equal(ours(x), alone)
        inplace = x.clone()
        ours(inplace, out=inplace)
        assert_bitwise_equal(inplace, alone)
        wide_x = torch.zeros(x.shape[0], cols + 5, dtype=dtype)
        wide_x[:, :cols] = x
        wide_out = torch.zeros(x.shape[0], cols + 3, dtype=dtype)
        ours(wide_x[:, :cols], out=wide_out[:, :cols])
        assert_bitwise_equal(wide_out[:, :cols], alone)
        assert not wide_out[:, cols:].any()


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_results_do_not_depend_on_threads(threads):
    """Single long rows take the split-by-segment path when threads > 1 and
    the row path otherwise; both must give the same bits."""
    cases = [
        rows_of(1, 3 * 2**18 + 5, torch.float32, seed=1, offset=1),
        rows_of(3, 2**17 + 3, torch.bfloat16, seed=2),
        rows_of(3, 9001, torch.bfloat16, seed=4),  # 16-bit rows whose exps the row path buffers
        rows_of(1, 32000, torch.float16, seed=5),
        rows_of(64, 3001, torch.float64, seed=3),
    ]
    try:
        hetkern.set_num_threads(1)
        expected = [(hetkern.softmax(x), hetkern.log_softmax(x)) for x in cases]
        hetkern.set_num_threads(threads)
        for x, (sm, lsm) in zip(cases, expected):
            assert_bitwise_equal(hetkern.softmax(x), sm)
            assert_bitwise_equal(hetkern.log_softmax(x), lsm)
    finally:
        hetkern.set_num_threads(0)


# ---- bad input ---------------------------------------------------------------

BAD = [
    # (id, exception, message fragment, call(out))
    ("list-x", TypeError, "'x' must be an array", lambda op, out: op([[1.0, 2.0]], out=out)),
    ("int-dtype", ValueError, "'x' has dtype int32", lambda op, out: op(np.ones((2, 4), np.int32), out=out)),
    ("dtype-mismatch", ValueError, "'out' has dtype float32; expected float64", lambda op, out: op(np.ones((2, 4)), out=out)),
    ("shape-mismatch", ValueError, r"'out' has shape \(2, 4\); expected \(4, 2\)", lambda op, out: op(np.ones((4, 2), np.float32), out=out)),
    # Rows of any stride are accepted (tests/test_strided.py); a strided last dimension is not.
    ("non-contiguous-x", ValueError, "'x' must be contiguous", lambda op, out: op(np.ones((4, 2), np.float32).T, out=out)),
    ("out-list", TypeError, "'out' must be an array", lambda op, out: op(np.ones((2, 4), np.float32), out=[[0.0] * 4] * 2)),
]


@pytest.mark.parametrize("op", [hetkern.softmax, hetkern.log_softmax], ids=OP_IDS)
@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_raises_and_writes_nothing(case, op):
    _, exc, fragment, call = case
    out = np.full((2, 4), 7.0, np.float32)
    before = bytes_of(out)
    with pytest.raises(exc, match=f"hetkern.{op.__name__}: {fragment}"):
        call(op, out)
    assert bytes_of(out) == before


@pytest.mark.parametrize("op", [hetkern.softmax, hetkern.log_softmax], ids=OP_IDS)
def test_read_only_non_contiguous_and_overlapping_out(op):
    x = np.ones((2, 4), np.float32)
    out = np.full((2, 4), 7.0, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="'out' is read-only"):
        op(x, out=out)
    backing = np.full((2, 8), 7.0, np.float32)
    with pytest.raises(ValueError, match="'out' must be contiguous"):
        op(x, out=backing[:, ::2])
    assert (backing == 7.0).all()
    buf = np.arange(10, dtype=np.float32)
    before = bytes_of(buf)
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):
        op(buf[1:].reshape(3, 3), out=buf[:-1].reshape(3, 3))
    assert bytes_of(buf) == before


# ---- CUDA --------------------------------------------------------------------

CUDA_LENGTHS = LENGTHS + [2048, 4096, 32000, HUGE, 2**20 + 3]
# Rows held by a cluster of blocks when few (over 32768 16-bit or float32
# elements, up to 262144), of every cluster shape, and lengths around them;
# float32 rows of 151936, 180000, 201088 and 262144 take 16 blocks of 5, 6,
# 8 and 8 packs a thread.
VOCAB_LENGTHS = [16392, 32000, 65536, 128256, 151936, 180000, 201088, 262144, 262152]


@requires_cuda
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_lengths_and_offsets(dtype, op):
    ours, theirs = op
    for length in CUDA_LENGTHS:
        n_rows = 2 if length > 4096 else 37  # 37: groups of a warp past the last row
        for offset in (0, 1, 3):
            x = rows_of(n_rows, length, dtype, "cuda", seed=length, offset=offset)
            y = ours(x)
            assert y.device == x.device
            check(y, x, theirs)
        x = rows_of(2, length, dtype, "cuda", seed=length + 1, wide=True)
        check(ours(x), x, theirs)


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_special_values(dtype):
    for length in (7, 300, 5000):
        x = torch.randn(6, length, dtype=torch.float64).to(dtype)
        x[0, ::2] = -INF
        x[1, :] = -INF
        x[2, length // 2] = INF
        x[3, length - 1] = NAN
        x[4, :-1] = -INF
        x = x.cuda()
        for ours, theirs in OPS:
            check(ours(x), x, theirs)


@requires_cuda
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_vocabulary_rows(dtype, op):
    """Logit rows: the cluster kernel (one row over 2..8 blocks) on aligned
    rows, the other kernels around it; special rows among ordinary ones and
    more rows than clusters in flight."""
    ours, theirs = op
    for length in VOCAB_LENGTHS:
        n_rows = 3 if length > 100000 else 9
        x = rows_of(n_rows, length, dtype, "cuda", seed=length)
        x[0, ::3] = -INF
        x[1, :] = -INF
        x[2, length // 3] = INF if n_rows > 3 else NAN
        check(ours(x), x, theirs)
    # Rows of 16K-32K values (one (max, sum) reduction): 8-block clusters up to 16 rows, 4-block
    # ones up to 33 (132 SMs)
    x = rows_of(24, 32000, dtype, "cuda", seed=24)
    x[5, :] = -INF
    check(ours(x), x, theirs)
    # 33-66 rows: float32 on 2-block clusters (256 threads of 16 packs); 16-bit rows one block each
    x = rows_of(48, 32000, dtype, "cuda", seed=48)
    x[47, :] = -INF
    x[3, 7] = NAN
    check(ours(x), x, theirs)
    # Past one wave of 8-block clusters of 512 threads x 8 packs (float32: two a SM at 64 registers)
    x = rows_of(24, 128256, dtype, "cuda", seed=25)
    x[0, ::3] = -INF
    x[23, :] = -INF
    check(ours(x), x, theirs)
    # Two waves of clusters (float32: 33 clusters of 8 one-an-SM blocks, 16 packs a thread)
    x = rows_of(33, 151936, dtype, "cuda", seed=33)
    x[32, :] = -INF
    x[17, 5] = NAN
    check(ours(x), x, theirs)
    x = rows_of(300, 40000, dtype, "cuda", seed=7)  # too many rows for clusters: one block each
    check(ours(x), x, theirs)


@requires_cuda
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_many_long_rows(dtype, op):
    """More long rows than clusters hold (40: a cluster row takes 8 blocks of
    an SM's 1-2): rows in registers and shared memory, one block each (up to
    155648 16-bit or 77824 float32 values), and past that the online kernel;
    more rows than SMs (300) of lengths the register kernel holds in 1024
    threads go to that kernel's smaller blocks, and 16-bit rows of 5120 and
    8192 values to its 256-thread rows of 4 packs, a block per row (float32:
    512 threads). 600 rows of 32000: more than an H100's 528 block slots of
    the shared-memory kernel, a block per row. Rows past one block of the
    shared kernel, more than 66 of them (the online kernel's clusters end
    there): the shared kernel on a cluster of 2 or 4 one-an-SM blocks a row
    on sm_90 (16-bit 155656, 200000: 2; float32 90000, 100000, 128256: 2,
    155656, 200000: 4; float64 and older GPUs: the online kernel), in place
    too, and at 67 rows, the fewest that take it on 132 SMs; 40 such
    rows keep the online kernel's clusters. The row's max, a NaN, an
    infinity and an all -inf row in different slices. Special rows among
    them."""
    ours, theirs = op
    for rows, length in [(300, 5120), (300, 8192), (300, 16392), (300, 32000), (600, 32000), (40, 32776),
                         (40, 65544), (40, 128256), (40, 155648), (40, 155656), (140, 155656),
                         (70, 100000), (140, 128256), (133, 90000), (67, 200000)]:
        x = rows_of(rows, length, dtype, "cuda", seed=length)
        x[0, ::3] = -INF
        x[1, :] = -INF
        x[2, length // 3] = INF
        x[3, length - 5] = NAN
        x[4, 7] = 1e4 if dtype != torch.float16 else 6e4  # a dominating max
        x[5, length - 1] = 1e4 if dtype != torch.float16 else 6e4  # in the last slice
        check_sampled_rows(ours(x), x, theirs)
    x = rows_of(140, 155656, dtype, "cuda", seed=11)
    x[6, 100000] = NAN
    expected = x.clone()
    ours(x, out=x)
    check_sampled_rows(x, expected, theirs)


@requires_cuda
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_few_rows_too_long_for_an_sm(dtype, op):
    """Rows past every on-chip kernel, few of them: the online kernel, each
    block a slice of a row, over a cooperative grid (1-8 rows on 132 SMs:
    132 / rows blocks a row, at most one per 4096 values; the blocks' totals
    parked in the output, which holds x itself in place) or a cluster of 8,
    4 or 2 blocks per row (17 and 40 rows, and rows whose output slots would
    not be 8-byte aligned: 5 x (2^20 + 3) but in float64). The row's max,
    a NaN, an infinity and an all -inf row sit in different slices; rows
    packed (300000) and not (2^20 + 3); in place too."""
    ours, theirs = op
    for rows, length in [(1, 300000), (5, 300000), (17, 300000), (40, 300000), (1, 2**20 + 3),
                         (5, 2**20 + 3), (2, 2**21)]:
        x = rows_of(rows, length, dtype, "cuda", seed=rows + length)
        x[0, length - 2] = 1e4 if dtype != torch.float16 else 6e4  # the max in the last slice
        if rows > 1:
            x[1, :] = -INF
        if rows > 4:
            x[2, length // 2] = NAN
            x[3, length // 3] = INF
        check(ours(x), x, theirs)
    for rows, length in [(3, 300000), (1, 2**20 + 3), (17, 300000)]:
        x = rows_of(rows, length, dtype, "cuda", seed=3)
        expected = x.clone()
        ours(x, out=x)
        check(x, expected, theirs)


# (rows, length) of each row kernel's launch shapes: rows of a few values
# (several a warp), a 1024-thread row, clusters of 8, 4 and 2 blocks with
# one reduction, 8 blocks with two, and registers and shared memory.
KERNEL_SHAPES = [(37, 1000), (128, 32000), (1, 32000), (24, 32000), (48, 32000), (2, 128256), (300, 32000)]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_terms_across_the_exp_range(dtype, op, device):
    """Rows spanning [max - 110, max] (spanning_rows), so that every term
    from 1 down to subnormal results (float32 softmax below |x - max| ~ 87,
    where CUDA's exponent FMA feeds exp2f) is checked against the bound, on
    every CUDA row kernel."""
    ours, theirs = op
    for rows, length in KERNEL_SHAPES:
        x = spanning_rows(rows, length, dtype, seed=rows * length)
        check(ours(x.to(device)), x, theirs)


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_dominating_max(dtype):
    check_dominating_max(dtype, "cuda")


# Row maxima where 16-bit softmax on CUDA folds the shift into exp's
# multiply-add (|max| <= 2^20) and where it cannot (beyond, up to bfloat16's
# largest values): each row is offset + randn * spread, the spread 4 or 2
# ulps of the offset where that is more (none overflowing).
FAR_OFFSETS = [0.0, 1000.0, -1000.0, 6.0e4, 2.0**19, -(2.0**20), 2.0**20 + 2.0**13, 1e30, -1e30, 2e38]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
def test_rows_far_from_zero(dtype, op, device):
    """Rows with every offset in one call, so that rows of one block (short
    rows) or one warp take different ways; each row kernel: several rows a
    warp (7), a block a row (300, 5000), registers and shared memory (300 x
    32000), a cluster a row (9 x 40000)."""
    ours, theirs = op
    offsets = [o for o in FAR_OFFSETS if abs(o) <= torch.finfo(dtype).max]
    for rows, length in [(37, 7), (20, 300), (20, 5000), (300, 32000), (9, 40000)]:
        g = torch.Generator().manual_seed(rows + length)
        offset = torch.tensor(offsets, dtype=torch.float64).repeat(rows // len(offsets) + 1)[:rows, None]
        spread = (2 * torch.finfo(dtype).eps * offset.abs()).clamp(min=4.0)  # >= 2 ulps of the offset
        x = (offset + torch.randn(rows, length, generator=g, dtype=torch.float64) * spread).to(dtype)
        check(ours(x.to(device)), x, theirs)


@requires_cuda
@pytest.mark.parametrize("length", [33, 1024, 5000])
def test_cuda_misaligned_out_relative_to_x(length):
    base = torch.randn(3 * length + 1, device="cuda", dtype=torch.float16)
    out_base = torch.empty(3 * length + 2, device="cuda", dtype=torch.float16)
    x, out = base[1:].view(3, length), out_base[2:].view(3, length)
    for ours, theirs in OPS:
        ours(x, out=out)
        check(out, x, theirs)


@requires_cuda
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_cuda_in_place_and_shapes(op):
    ours, theirs = op
    for length in (17, 1024, 70000):
        x = torch.randn(3, length, device="cuda", dtype=torch.bfloat16)
        x_copy = x.clone()
        assert ours(x, out=x) is x
        check(x, x_copy, theirs)
    for shape in [(0,), (3, 0), (0, 5), (), (2, 3, 5)]:
        x = torch.randn(shape, device="cuda")
        check(ours(x), x, theirs)


@requires_cuda
def test_cuda_runs_on_current_stream():
    """On a side stream, x is filled only after a long GPU sleep; a kernel
    launched anywhere but on that stream would read x before the fill."""
    for length in (64, 100_000):
        x = torch.zeros(16, length, device="cuda")
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU cycles
            x[:, 0].fill_(100.0)
            y = hetkern.softmax(x)
        side.synchronize()
        assert bool((y[:, 0] == 1.0).all())


@requires_cuda
def test_cuda_first_call_inside_graph_capture():
    """A fresh process whose first softmax calls are captured: the float32
    vocabulary row asks the driver, once per device, whether 16-block
    clusters fit (a function attribute and an occupancy query), and many
    rows past one SM (140 x 155656 bfloat16, the clustered shared kernel)
    ask it at each call; neither may break the capture."""
    script = f"""
import sys
sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
import torch, hetkern
from test_softmax import check
xs = [torch.randn(1, 151936, device="cuda"), torch.randn(2, 151936, device="cuda"),
      torch.randn(140, 155656, device="cuda", dtype=torch.bfloat16)]
outs = [torch.empty_like(x) for x in xs]
stream = torch.cuda.Stream()
stream.wait_stream(torch.cuda.current_stream())
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph, stream=stream):
    hetkern.softmax(xs[0], out=outs[0])
    hetkern.log_softmax(xs[1], out=outs[1])
    hetkern.softmax(xs[2], out=outs[2])
for x in xs:
    x.copy_(torch.randn_like(x) * 8)
graph.replay()
torch.cuda.synchronize()
check(outs[0], xs[0], torch.softmax)
check(outs[1], xs[1], torch.log_softmax)
check(outs[2], xs[2], torch.softmax)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@requires_cuda
def test_cuda_graph_capture_and_replay():
    # the last: rows over a cooperative grid (the online kernel's grid split)
    xs = [torch.randn(64, 100, device="cuda"), torch.randn(4, 70_000, device="cuda", dtype=torch.bfloat16),
          torch.randn(2, 600_000, device="cuda", dtype=torch.bfloat16)]
    outs = [torch.empty_like(x) for x in xs]
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for x, out in zip(xs, outs):  # warm-up outside the graph
            hetkern.log_softmax(x, out=out)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for x, out in zip(xs, outs):
            hetkern.log_softmax(x, out=out)
    for x in xs:
        x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    for x, out in zip(xs, outs):
        check(out, x, torch.log_softmax)
