"""Offsets past 2^31 (issue 14, item 4): one test per op family runs on an
array of more than 2^31 elements, or on rows 2^31 elements apart, so that an
index or offset computed in 32 bits anywhere in a kernel shows up as a wrong,
missing or misplaced result.

Each test writes known values at the far end (past element 2^31) and
checks that region (and the start) against the op's reference; the rest is
checked cheaply (a constant input gives a constant output), so a kernel that
wraps an offset, stops early or writes past the end fails.

They need about 5-17 GiB per test: they run on CUDA where the GPU has the
memory, and on the CPU only when HETKERN_TEST_LARGE=1 (tools/gpu-check sets
it; the device host has 128 GiB) and the machine has the memory. A file lock
makes pytest-xdist workers take turns, so at most one of them holds such
arrays at a time.
"""

from __future__ import annotations

import fcntl
import os
import tempfile

import pytest
import torch
import torch.nn.functional as F

import hetkern
from conftest import HAVE_CUDA, assert_bitwise_equal
from test_norm import check_layernorm_close, check_rms_close, rmsnorm_reference
from test_rope import make_cache, rope_reference
from test_softmax import check as check_softmax

HIDDEN = 4096
ROWS = 2**31 // HIDDEN + 1          # ROWS * HIDDEN = 2^31 + 4096 elements
N = ROWS * HIDDEN
TAIL_ROWS = 3                       # the checked rows at the far end
GiB = 2**30


def _cpu_memory_bytes() -> int:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0


def _device_params():
    params = []
    if HAVE_CUDA:
        params.append("cuda")
    else:
        params.append(pytest.param("cuda", marks=pytest.mark.skip(reason="needs a CUDA GPU")))
    if os.environ.get("HETKERN_TEST_LARGE") == "1":
        params.append("cpu")
    else:
        params.append(pytest.param("cpu", marks=pytest.mark.skip(
            reason="set HETKERN_TEST_LARGE=1 to run > 2^31-element CPU tests (~20 GiB of memory)")))
    return params


@pytest.fixture(params=_device_params())
def device(request):
    return request.param


@pytest.fixture
def room(device):
    """Takes the machine-wide turn for big arrays; `room(gib)` skips unless
    the device has that much memory free."""
    path = os.path.join(tempfile.gettempdir(), "hetkern-test-large.lock")
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)

        def need(gib: float):
            free = torch.cuda.mem_get_info()[0] if device == "cuda" else _cpu_memory_bytes()
            if free < gib * GiB:
                pytest.skip(f"needs {gib} GiB free on {device}, has {free / GiB:.1f}")

        try:
            yield need
        finally:
            if device == "cuda":
                torch.cuda.synchronize()
                torch.cuda.empty_cache()


def _random(shape, dtype, device, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype).to(device)


def _huge_rows(dtype, device, seed, fill=0.5):
    """(ROWS, HIDDEN) filled with `fill`, random values in the first row and
    the last TAIL_ROWS rows (past element 2^31)."""
    x = torch.empty(ROWS, HIDDEN, dtype=dtype, device=device)
    x.fill_(fill)
    x[:1] = _random((1, HIDDEN), dtype, device, seed)
    x[-TAIL_ROWS:] = _random((TAIL_ROWS, HIDDEN), dtype, device, seed + 1, scale=3.0)
    return x


def _far_apart_rows(dtype, device, seed, cols=HIDDEN):
    """Two rows of `cols` elements 2^31 elements apart: a row-strided view of
    one buffer, its second row past element 2^31."""
    stride = 2**31 + 64
    base = torch.full((stride + cols,), -7.0, dtype=dtype, device=device)
    view = base.as_strided((2, cols), (stride, 1))
    view.copy_(_random((2, cols), dtype, device, seed, scale=2.0))
    return base, view


def _ends(t):
    """A CPU copy of the checked rows: the first and the last TAIL_ROWS."""
    return torch.cat([t[:1], t[-TAIL_ROWS:]]).cpu()


def _copy(t):
    """A CPU copy (t.cpu() would alias a CPU tensor that is then written)."""
    return t.to("cpu", copy=True)


# ---- elementwise -------------------------------------------------------------


def test_elementwise(device, room):
    room(9)
    x = _huge_rows(torch.bfloat16, device, seed=1)
    ends = _ends(x)
    out = hetkern.scale(x.view(-1), 2.0).view(ROWS, HIDDEN)  # exact: bit-equal to torch
    assert_bitwise_equal(_ends(out), ends * 2.0)
    assert bool((out[1:-TAIL_ROWS] == 1.0).all())
    del out
    # A (H,) y repeating along rows: the broadcast's period arithmetic past 2^31.
    y = _random((HIDDEN,), torch.bfloat16, device, seed=3)
    hetkern.add(x, y, out=x)  # in place: one buffer
    assert_bitwise_equal(_ends(x), ends + y.cpu())
    assert bool((x[1:-TAIL_ROWS] == 0.5 + y).all())


# ---- activation --------------------------------------------------------------


def test_activation(device, room):
    room(17)
    # silu_and_mul over (ROWS, 2 * HIDDEN): 2^32 input elements, the output's
    # last rows past 2^31.
    x = torch.empty(ROWS, 2 * HIDDEN, dtype=torch.bfloat16, device=device)
    x.fill_(0.5)
    x[-TAIL_ROWS:] = _random((TAIL_ROWS, 2 * HIDDEN), torch.bfloat16, device, seed=4, scale=3.0)
    out = hetkern.silu_and_mul(x)
    tail = x[-TAIL_ROWS:].cpu()
    small = hetkern.silu_and_mul(x[-TAIL_ROWS:].clone())  # same device, per element
    assert_bitwise_equal(out[-TAIL_ROWS:], small)
    expected = (F.silu(tail[:, :HIDDEN].float()) * tail[:, HIDDEN:].float()).to(torch.bfloat16)
    assert bool(((out[-TAIL_ROWS:].cpu().float() - expected.float()).abs()
                 <= 2**-7 * expected.float().abs() + 1e-30).all())
    middle = (F.silu(torch.tensor(0.5)) * 0.5).to(torch.bfloat16).item()
    assert bool((out[:-TAIL_ROWS] == middle).all())
    del x, out
    # A unary activation on a flat array of 2^31 + 4096 elements: float16
    # through the streaming kernel, bfloat16 through CUDA's GELU table
    # (activation.cu), against small calls.
    for dtype in (torch.float16, torch.bfloat16):
        x = _huge_rows(dtype, device, seed=5).view(-1)
        out = hetkern.gelu(x)
        small = hetkern.gelu(x[-TAIL_ROWS * HIDDEN:].clone())
        assert_bitwise_equal(out[-TAIL_ROWS * HIDDEN:], small)
        assert bool((out[HIDDEN:-TAIL_ROWS * HIDDEN] == hetkern.gelu(x[HIDDEN:HIDDEN + 1].clone())).all())
        del x, out


# ---- reduce ------------------------------------------------------------------


def test_reduce(device, room):
    room(9)
    # The whole array: zeros but for powers of two at both ends, so the sum
    # is exact whatever the order.
    x = torch.zeros(N, dtype=torch.float32, device=device)
    x[0], x[2**31 + 5], x[-1] = 1.0, 2.0, 4.0
    assert hetkern.sum(x, axis=None).item() == 7.0
    assert hetkern.max(x, axis=None).item() == 4.0
    del x
    # Per row (reductions take contiguous arrays): the last rows past 2^31.
    x = _huge_rows(torch.float32, device, seed=6)
    got = hetkern.sum(x)
    ends = _ends(x).double()
    err = (_ends(got.view(ROWS, 1)).double().view(-1) - ends.sum(-1)).abs()
    assert bool((err <= 1e-5 * ends.abs().sum(-1)).all())
    assert bool((got[1:-TAIL_ROWS] == 0.5 * HIDDEN).all())
    assert_bitwise_equal(_ends(hetkern.max(x).view(ROWS, 1)).view(-1), _ends(x).amax(-1))


# ---- norm --------------------------------------------------------------------


def test_norm(device, room):
    room(9)
    dtype, eps = torch.bfloat16, 1e-6
    w = _random((HIDDEN,), dtype, device, seed=7, scale=0.3) + 1.0
    x = _huge_rows(dtype, device, seed=8)
    out = hetkern.rmsnorm(x, w, eps)
    check_rms_close(_ends(out), rmsnorm_reference(_ends(x), w.cpu(), eps), dtype, HIDDEN)
    middle = hetkern.rmsnorm(x[1:2].clone(), w, eps)
    assert bool((out[1:-TAIL_ROWS] == middle).all())
    del out
    # fused_add_rmsnorm in place on rows 2^31 elements apart (x and residual).
    base_x, xs = _far_apart_rows(dtype, device, seed=9)
    base_r, rs = _far_apart_rows(dtype, device, seed=10)
    x0, r0 = _copy(xs), _copy(rs)
    hetkern.fused_add_rmsnorm(xs, rs, w, eps)
    summed = (x0 + r0)
    assert_bitwise_equal(rs.cpu(), summed)
    check_rms_close(xs.cpu(), rmsnorm_reference(summed, w.cpu(), eps), dtype, HIDDEN)
    # Nothing between the rows was written.
    assert bool((base_x[HIDDEN:2**31 + 64] == -7.0).all())
    assert bool((base_r[HIDDEN:2**31 + 64] == -7.0).all())
    del base_r, xs, rs
    # layernorm reading those rows, writing a row-strided out 2^31 apart too.
    base_x, xs = _far_apart_rows(dtype, device, seed=11)
    base_o, out_rows = _far_apart_rows(dtype, device, seed=12)
    b = _random((HIDDEN,), dtype, device, seed=13, scale=0.1)
    hetkern.layernorm(xs, w, b, 1e-5, out=out_rows)
    check_layernorm_close(out_rows.cpu(), xs.cpu(), w.cpu(), b.cpu(), 1e-5)
    assert bool((base_o[HIDDEN:2**31 + 64] == -7.0).all())


# ---- softmax -----------------------------------------------------------------


def test_softmax(device, room):
    room(9)
    x = _huge_rows(torch.bfloat16, device, seed=14)
    out = hetkern.softmax(x)
    check_softmax(_ends(out), _ends(x), torch.softmax)
    assert bool((out[1:-TAIL_ROWS] == out[1:2]).all())
    del out, x
    base, rows = _far_apart_rows(torch.float32, device, seed=15, cols=32000)
    got = hetkern.log_softmax(rows)
    check_softmax(got, rows.cpu(), torch.log_softmax)


# ---- rope --------------------------------------------------------------------


def test_rope(device, room):
    room(6)
    heads, kv_heads, head_size = 32, 8, 128
    tokens = 2**31 // (heads * head_size) + 1  # query: 2^31 + 4096 elements
    dtype = torch.bfloat16
    cache = make_cache(4096, head_size, torch.float32).to(device)
    positions = torch.full((tokens,), 7, dtype=torch.int64, device=device)
    positions[-TAIL_ROWS:] = torch.tensor([4095, 0, 1234], device=device)
    query = torch.empty(tokens, heads * head_size, dtype=dtype, device=device)
    query.fill_(0.25)
    key = torch.empty(tokens, kv_heads * head_size, dtype=dtype, device=device)
    key.fill_(-0.5)
    query[-TAIL_ROWS:] = _random((TAIL_ROWS, heads * head_size), dtype, device, seed=16)
    key[-TAIL_ROWS:] = _random((TAIL_ROWS, kv_heads * head_size), dtype, device, seed=17)
    q_tail, k_tail = _copy(query[-TAIL_ROWS:]), _copy(key[-TAIL_ROWS:])
    q_first = _copy(query[:1])
    hetkern.rope(positions, query, key, head_size, cache, True)
    expected_q, expected_k = rope_reference(positions[-TAIL_ROWS:].cpu(), q_tail, k_tail,
                                            head_size, cache.cpu(), True)
    assert_bitwise_equal(query[-TAIL_ROWS:], expected_q)
    assert_bitwise_equal(key[-TAIL_ROWS:], expected_k)
    first_q, _ = rope_reference(positions[:1].cpu(), q_first, None, head_size, cache.cpu(), True)
    assert bool((query[:-TAIL_ROWS] == first_q.to(device)).all())
