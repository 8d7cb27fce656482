"""Row-strided views (issue 10, item 5): the row ops accept what vLLM's ops
accept, an array whose last dimension (rope: each token's heads) is
contiguous and whose rows have any stride, such as `x[:, :hidden]` or
`q, k, v = qkv.split(...)`; outputs may be row-strided too. Every other
layout still raises ValueError.

hypothesis draws the row counts, lengths, row strides and start offsets. The
oracle is the same op on a contiguous copy: on the CPU (every Highway target)
a row's arithmetic depends only on its length, so results must be bit-equal;
on CUDA the elementwise ops (gated activations, rope) must be bit-equal, and
the reductions (norms, softmax), whose order follows the 16-byte alignment,
are held to the tolerances of tests/test_norm.py and tests/test_softmax.py.
Memory between the rows must never be written.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hetkern
from conftest import DTYPES, HAVE_CUDA, assert_bitwise_equal, bytes_of, requires_cuda
from test_norm import (FUSED_OPS, RMS_OPS, check_layernorm_close, check_rms_close, rmsnorm_reference,
                       weight_tensor)
from test_rope import make_cache, rope_reference
from test_softmax import check as check_softmax

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
SENTINEL = -7.0  # fills the memory between rows; it must survive every call


@pytest.fixture(params=DEVICES)
def device(request, cpu_target):
    """Each CPU target on the CPU (cpu_target forces it); CUDA once, after
    the first target (the CPU target does not matter there)."""
    if request.param == "cuda" and cpu_target != hetkern.available_cpu_targets()[0]:
        pytest.skip("CUDA runs once, not once per CPU target")
    return request.param


# ---- Views -------------------------------------------------------------------


@st.composite
def row_layouts(draw, max_cols=300, min_cols=1):
    """(leading shape, cols, row stride, start offset) of a row-strided view:
    one or two leading dimensions, strides from packed to a long gap, with
    multiples of 8 (16-byte rows for 16-bit types) likely."""
    lead = draw(st.sampled_from([(0,), (1,), (2,), (5,), (9,), (2, 3), (3, 1), (1, 4)]))
    cols = draw(st.one_of(st.integers(min_cols, 9), st.sampled_from([16, 64, 128, 136]),
                          st.integers(min_cols, max_cols)))
    gap = draw(st.one_of(st.just(0), st.integers(1, 9), st.sampled_from([8, 16, 64]),
                         st.integers(0, 300)))
    offset = draw(st.sampled_from([0, 0, 1, 3, 8]))
    return lead, cols, cols + gap, offset


def strided(lead, cols, stride, offset, dtype, device, seed, values=None):
    """A view of `lead + (cols,)` whose rows are `stride` elements apart,
    starting `offset` elements into a buffer filled with SENTINEL; the
    leading dimensions collapse into that one stride. Returns (view, buffer)."""
    rows = math.prod(lead)
    size = offset + (rows - 1) * stride + cols if rows else offset
    buf = torch.full((max(size, 1),), SENTINEL, dtype=dtype, device=device)
    strides = [stride] * len(lead)
    for i in range(len(lead) - 2, -1, -1):
        strides[i] = strides[i + 1] * lead[i + 1]
    view = buf.as_strided(lead + (cols,), tuple(strides) + (1,), offset)
    if values is None:
        g = torch.Generator().manual_seed(seed)
        values = torch.randn(view.shape, generator=g, dtype=torch.float64) * 3
    view.copy_(values.to(dtype))
    return view, buf


def untouched_outside(buf, view, before):
    """The bytes of `buf` outside `view` equal `before`'s."""
    mask = torch.ones(buf.shape, dtype=torch.bool, device=buf.device)
    mask.as_strided(view.shape, view.stride(), view.storage_offset()).fill_(False)
    assert_bitwise_equal(buf[mask], before[mask])


def draw_out(data, lead, cols, dtype, device, seed):
    """An output of shape lead + (cols,): strided like the inputs are, or contiguous."""
    contiguous = data.draw(st.booleans(), label="contiguous out")
    gap = 0 if contiguous else data.draw(st.one_of(st.integers(1, 9), st.sampled_from([8, 40])),
                                         label="out gap")
    offset = data.draw(st.sampled_from([0, 2, 8]), label="out offset")
    return strided(lead, cols, cols + gap, offset, dtype, device, seed)


def same_or_close(device, got, expected, close):
    if device == "cpu":
        assert_bitwise_equal(got, expected)
    else:
        close()


# ---- Norms -------------------------------------------------------------------


@pytest.mark.parametrize("op", list(RMS_OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@SETTINGS
@given(layout=row_layouts(), data=st.data())
def test_rmsnorm(device, dtype, op, layout, data):
    fn, reference, center = RMS_OPS[op]
    lead, cols, stride, offset = layout
    x, x_buf = strided(lead, cols, stride, offset, dtype, device, seed=1)
    w = weight_tensor(cols, dtype, device, center=center)
    x_before = x_buf.clone()
    expected = fn(x.contiguous(), w)
    if data.draw(st.booleans(), label="in place"):
        out, out_buf = x, x_buf
        x_ref = x.clone()
    else:
        out, out_buf = draw_out(data, lead, cols, dtype, device, seed=2)
        x_ref = x
    out_before = out_buf.clone()
    assert fn(x, w, out=out) is out
    same_or_close(device, out, expected,
                  lambda: check_rms_close(out, reference(x_ref.cpu(), w.cpu(), 1e-6), dtype, cols))
    untouched_outside(out_buf, out, out_before)
    if out_buf is not x_buf:
        assert_bitwise_equal(x_buf, x_before)


@pytest.mark.parametrize("op", list(FUSED_OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@SETTINGS
@given(layout=row_layouts(), data=st.data())
def test_fused_add_rmsnorm(device, dtype, op, layout, data):
    fn, reference, center = FUSED_OPS[op]
    lead, cols, stride, offset = layout
    x, x_buf = strided(lead, cols, stride, offset, dtype, device, seed=1)
    r_gap = data.draw(st.one_of(st.integers(0, 9), st.sampled_from([8, 64])), label="residual gap")
    residual, r_buf = strided(lead, cols, cols + r_gap, data.draw(st.sampled_from([0, 5, 8])),
                              dtype, device, seed=3)
    w = weight_tensor(cols, dtype, device, center=center)
    x_c, r_c = x.contiguous().clone(), residual.contiguous().clone()
    fn(x_c, r_c, w)
    x_before, r_before = x_buf.clone(), r_buf.clone()
    assert fn(x, residual, w) == (x, residual)
    assert_bitwise_equal(residual, r_c)  # the rounded sum: exact on every device
    same_or_close(device, x, x_c,
                  lambda: check_rms_close(x, reference(residual.cpu(), w.cpu(), 1e-6), dtype, cols))
    untouched_outside(x_buf, x, x_before)
    untouched_outside(r_buf, residual, r_before)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@SETTINGS
@given(layout=row_layouts(), data=st.data())
def test_layernorm(device, dtype, layout, data):
    lead, cols, stride, offset = layout
    x, x_buf = strided(lead, cols, stride, offset, dtype, device, seed=1)
    w = weight_tensor(cols, dtype, device)
    b = weight_tensor(cols, dtype, device, seed=4) if data.draw(st.booleans(), label="bias") else None
    expected = hetkern.layernorm(x.contiguous(), w, b)
    out, out_buf = draw_out(data, lead, cols, dtype, device, seed=2)
    x_before, out_before = x_buf.clone(), out_buf.clone()
    assert hetkern.layernorm(x, w, b, out=out) is out
    same_or_close(device, out, expected, lambda: check_layernorm_close(out, x.cpu(), w.cpu(),
                                                                       None if b is None else b.cpu(), 1e-5))
    untouched_outside(out_buf, out, out_before)
    assert_bitwise_equal(x_buf, x_before)


# ---- Softmax -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@SETTINGS
@given(layout=row_layouts(max_cols=5000), data=st.data())
def test_softmax(device, dtype, name, layout, data):
    op, torch_op = getattr(hetkern, name), getattr(torch, name)
    lead, cols, stride, offset = layout
    x, x_buf = strided(lead, cols, stride, offset, dtype, device, seed=1)
    expected = op(x.contiguous())
    if data.draw(st.booleans(), label="in place"):
        out, out_buf, x_ref = x, x_buf, x.clone()
    else:
        (out, out_buf), x_ref = draw_out(data, lead, cols, dtype, device, seed=2), x
    x_before, out_before = x_buf.clone(), out_buf.clone()
    assert op(x, out=out) is out
    same_or_close(device, out, expected, lambda: check_softmax(out, x_ref, torch_op))
    untouched_outside(out_buf, out, out_before)
    if out_buf is not x_buf:
        assert_bitwise_equal(x_buf, x_before)


# ---- Gated activations -------------------------------------------------------

GATED = {"silu_and_mul": lambda x, out: hetkern.silu_and_mul(x, out=out),
         "gelu_and_mul": lambda x, out: hetkern.gelu_and_mul(x, out=out),
         "gelu_tanh_and_mul": lambda x, out: hetkern.gelu_and_mul(x, "tanh", out=out)}


@pytest.mark.parametrize("name", list(GATED))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@SETTINGS
@given(layout=row_layouts(max_cols=200), data=st.data())
def test_gated(device, dtype, name, layout, data):
    op = GATED[name]
    lead, d, _, offset = layout
    gap = data.draw(st.one_of(st.integers(0, 9), st.sampled_from([8, 16, 100])), label="x gap")
    x, x_buf = strided(lead, 2 * d, 2 * d + gap, offset, dtype, device, seed=1)
    expected = op(x.contiguous(), None)
    out, out_buf = draw_out(data, lead, d, dtype, device, seed=2)
    x_before, out_before = x_buf.clone(), out_buf.clone()
    assert op(x, out) is out
    assert_bitwise_equal(out, expected)  # elementwise: exact on every device
    untouched_outside(out_buf, out, out_before)
    assert_bitwise_equal(x_buf, x_before)


# ---- Rope --------------------------------------------------------------------


@st.composite
def rope_layouts(draw):
    """vLLM's fused qkv projection split into q, k (and v), with optional
    extra room per token, as (num_tokens, heads * head_size) or
    (num_tokens, heads, head_size) views; positions (num_tokens,) or (2, n)."""
    batch = draw(st.sampled_from([None, 2]))
    tokens = draw(st.sampled_from([0, 1, 2, 5, 8])) * (batch or 1)
    head_size = draw(st.sampled_from([8, 16, 64, 80, 128]))
    rot_dim = draw(st.sampled_from([head_size, head_size // 2]))
    heads = draw(st.integers(1, 6))
    kv_heads = draw(st.sampled_from([None, 1, 2]))
    extra = draw(st.one_of(st.just(0), st.integers(1, 9), st.sampled_from([8, 64])))
    offset = draw(st.sampled_from([0, 1, 8]))
    split_heads = draw(st.booleans())
    is_neox = draw(st.booleans())
    return batch, tokens, head_size, rot_dim, heads, kv_heads, extra, offset, split_heads, is_neox


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@SETTINGS
@given(layout=rope_layouts(), data=st.data())
def test_rope_qkv_split(device, dtype, layout, data):
    batch, tokens, head_size, rot_dim, heads, kv_heads, extra, offset, split_heads, is_neox = layout
    cache_dtype = data.draw(st.sampled_from([dtype, torch.float32]), label="cache dtype")
    cache = make_cache(64, rot_dim, cache_dtype).to(device)
    g = torch.Generator().manual_seed(5)
    lead = (tokens,) if batch is None else (batch, tokens // batch)
    positions = torch.randint(0, 64, lead, generator=g).to(device)
    q_width, k_width = heads * head_size, (kv_heads or 0) * head_size
    qkv, buf = strided(lead, q_width + 2 * k_width + extra, q_width + 2 * k_width + extra, offset,
                       dtype, device, seed=6)
    query = qkv[..., :q_width]
    key = qkv[..., q_width:q_width + k_width] if kv_heads else None
    if split_heads:
        query = query.unflatten(-1, (heads, head_size))
        key = None if key is None else key.unflatten(-1, (kv_heads, head_size))
    expected_q, expected_k = rope_reference(positions.cpu(), query.cpu(), None if key is None else key.cpu(),
                                            head_size, cache.cpu(), is_neox)
    before = buf.clone()
    assert hetkern.rope(positions, query, key, head_size, cache, is_neox) == (query, key)
    assert_bitwise_equal(query, expected_q)
    written = [query] + ([key] if key is not None else [])
    mask = torch.ones(buf.shape, dtype=torch.bool, device=device)
    for t in written:
        mask.as_strided(t.shape, t.stride(), t.storage_offset()).fill_(False)
    assert_bitwise_equal(buf[mask], before[mask])  # v and the extra room untouched
    if key is not None:
        assert_bitwise_equal(key, expected_k)


# ---- NumPy views -------------------------------------------------------------


def test_numpy_row_strided_views(cpu_target):
    base = np.random.default_rng(0).standard_normal((6, 40)).astype(np.float32)
    x = base[:, 3:35]  # rows 40 apart, starting misaligned
    w = np.linspace(0.5, 1.5, 32, dtype=np.float32)
    assert np.array_equal(hetkern.rmsnorm(x, w), hetkern.rmsnorm(np.ascontiguousarray(x), w))
    assert np.array_equal(hetkern.softmax(x), hetkern.softmax(np.ascontiguousarray(x)))
    out = np.zeros((6, 40), np.float32)
    hetkern.silu_and_mul(x, out=out[:, :16])
    assert np.array_equal(out[:, :16], hetkern.silu_and_mul(np.ascontiguousarray(x)))
    assert not out[:, 16:].any()


# ---- Layouts that stay refused -------------------------------------------------


def _t(*shape):
    return torch.ones(shape)


BAD_LAYOUTS = {
    # op call, argument named in the message
    "rmsnorm-transposed-x": (lambda: hetkern.rmsnorm(_t(8, 4).t(), _t(8)), "'x' must be contiguous along"),
    "rmsnorm-strided-last-dim": (lambda: hetkern.rmsnorm(_t(4, 16)[:, ::2], _t(8)), "'x' must be contiguous"),
    "rmsnorm-leading-not-collapsible": (lambda: hetkern.rmsnorm(_t(2, 4, 8)[:, :3], _t(8)),
                                        r"'x' must be contiguous along its last dimension"),
    "rmsnorm-transposed-out": (lambda: hetkern.rmsnorm(_t(4, 8), _t(8), out=_t(8, 4).t()), "'out' must be contiguous"),
    "rmsnorm-out-rows-overlap": (lambda: hetkern.rmsnorm(_t(4, 8), _t(8), out=_t(1, 8).expand(4, 8)),
                                 "'out' is written, but its rows overlap"),
    "fused-residual-leading": (lambda: hetkern.fused_add_rmsnorm(_t(2, 3, 8), _t(2, 4, 8)[:, 1:], _t(8)),
                               "'residual' must be contiguous"),
    "fused-x-rows-overlap": (lambda: hetkern.fused_add_rmsnorm(_t(1, 8).expand(3, 8), _t(3, 8), _t(8)),
                             "'x' is written, but its rows overlap"),
    "layernorm-strided-last-dim": (lambda: hetkern.layernorm(_t(4, 16)[:, 1::2], _t(8)), "'x' must be contiguous"),
    "softmax-transposed": (lambda: hetkern.softmax(_t(8, 4).t()), "'x' must be contiguous"),
    "softmax-out-leading": (lambda: hetkern.softmax(_t(2, 3, 8), out=_t(2, 4, 8)[:, :3]), "'out' must be contiguous"),
    "log_softmax-strided-last-dim": (lambda: hetkern.log_softmax(_t(3, 8)[:, ::2]), "'x' must be contiguous"),
    "silu_and_mul-transposed": (lambda: hetkern.silu_and_mul(_t(8, 4).t()), "'x' must be contiguous"),
    "gelu_and_mul-out-strided-last-dim": (lambda: hetkern.gelu_and_mul(_t(3, 8), out=_t(3, 8)[:, ::2]),
                                          "'out' must be contiguous"),
    "rope-query-heads-strided": (lambda: hetkern.rope(torch.zeros(3, dtype=torch.long), _t(3, 4, 16)[:, ::2],
                                                      None, 16, make_cache(8, 16, torch.float32)),
                                 "'query' must be contiguous along its last 2 dimensions"),
    "rope-key-transposed": (lambda: hetkern.rope(torch.zeros(3, dtype=torch.long), _t(3, 16), _t(16, 3).t(),
                                                 16, make_cache(8, 16, torch.float32)), "'key' must be contiguous"),
}


@pytest.mark.parametrize("case", list(BAD_LAYOUTS))
def test_other_layouts_raise_value_error(case):
    call, fragment = BAD_LAYOUTS[case]
    with pytest.raises(ValueError, match=fragment):
        call()


def test_overlap_checks_follow_the_strided_extent():
    """Interleaved rows that share no byte are disjoint (q and k of one qkv);
    rows that do share bytes are refused, nothing written."""
    buf = torch.randn(4, 48)
    before = buf.clone()
    cache = make_cache(8, 16, torch.float32)
    positions = torch.zeros(4, dtype=torch.long)
    with pytest.raises(ValueError, match="'query' overlaps 'key'"):
        hetkern.rope(positions, buf[:, :32], buf[:, 16:32], 16, cache)
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):
        hetkern.rmsnorm(buf[:, :16], torch.ones(16), out=buf[:, 8:24])
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):  # into the next row
        hetkern.softmax(buf[1:, :8], out=buf.view(-1).as_strided((3, 8), (48, 1), 44))
    with pytest.raises(ValueError, match="'residual' overlaps 'x'"):
        hetkern.fused_add_rmsnorm(buf[:, :16], buf[:, 15:31], torch.ones(16))
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):
        hetkern.silu_and_mul(buf[:, :32], out=buf[:, 31:47])
    assert_bitwise_equal(buf, before)
    # Disjoint interleaved rows of one buffer: accepted.
    hetkern.rmsnorm(buf[:, :16], torch.ones(16), out=buf[:, 16:32])
    hetkern.silu_and_mul(buf[:, :32], out=buf[:, 32:48])
    hetkern.rope(positions, buf[:, :32], buf[:, 32:48], 16, cache)


@requires_cuda
@pytest.mark.parametrize("op", ["rmsnorm", "softmax", "silu_and_mul", "rope"])
def test_cuda_row_offsets_past_2_31(op):
    """Row 2 starts 2 * (2^30 + 64) elements in: past int32 offsets."""
    stride, cols = 2**30 + 64, 128
    try:
        buf = torch.full((2 * stride + cols,), SENTINEL, dtype=torch.bfloat16, device="cuda")
    except torch.OutOfMemoryError:
        pytest.skip("needs 4.3 GB of GPU memory")
    x = buf.as_strided((3, cols), (stride, 1))
    x.copy_(torch.randn(3, cols))
    if op == "rmsnorm":
        w = torch.ones(cols, dtype=torch.bfloat16, device="cuda")
        out = hetkern.rmsnorm(x, w)
        check_rms_close(out, rmsnorm_reference(x.cpu(), w.cpu(), 1e-6), torch.bfloat16, cols)
        hetkern.rmsnorm(x, w, out=x)
        assert_bitwise_equal(x, out)
    elif op == "softmax":
        out = hetkern.softmax(x)
        check_softmax(out, x, torch.softmax)
    elif op == "silu_and_mul":
        assert_bitwise_equal(hetkern.silu_and_mul(x), hetkern.silu_and_mul(x.contiguous()))
    else:
        positions = torch.tensor([3, 5, 7], device="cuda")
        cache = make_cache(8, 64, torch.float32).cuda()
        expected, _ = rope_reference(positions.cpu(), x.cpu(), None, 64, cache.cpu(), True)
        hetkern.rope(positions, x, None, 64, cache)
        assert_bitwise_equal(x, expected)
    del buf
    torch.cuda.empty_cache()
