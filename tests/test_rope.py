"""hetkern.rope against a torch port of vLLM's RotaryEmbedding.forward_native,
computed in float32 (float64 for float64 inputs) and rounded once, on every
dtype, layout, head size and CPU target, and on CUDA where a GPU is present.
The contract is bit-equality (see docs/rope.md)."""

from __future__ import annotations

import functools
import numpy as np
import pytest
import torch

import hetkern
from conftest import DTYPES, assert_bitwise_equal, bytes_of, requires_cuda

HEAD_SIZES = [64, 80, 128, 256]
LAYOUTS = [pytest.param(True, id="neox"), pytest.param(False, id="gptj")]


# ---- Reference: vLLM's forward_native, in the compute type -------------------


def _apply_rotary_emb_torch(x, cos, sin, is_neox):
    # vLLM: rotary_embedding/common.py apply_rotary_emb_torch.
    cos = cos.unsqueeze(-2).to(x.dtype)
    sin = sin.unsqueeze(-2).to(x.dtype)
    if is_neox:
        x1, x2 = torch.chunk(x, 2, dim=-1)
    else:
        x1, x2 = x[..., ::2], x[..., 1::2]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    return torch.cat((o1, o2), dim=-1) if is_neox else torch.stack((o1, o2), dim=-1).flatten(-2)


def rope_reference(positions, query, key, head_size, cos_sin_cache, is_neox):
    """vLLM's RotaryEmbedding.forward_native with query/key/cache first
    converted (exactly) to the compute type and the result rounded once to
    the query's dtype; returns new tensors."""
    compute = torch.float64 if query.dtype == torch.float64 else torch.float32
    positions = positions.flatten().long()
    num_tokens = positions.shape[0]
    rot_dim = cos_sin_cache.shape[1]
    cos, sin = cos_sin_cache.to(compute).index_select(0, positions).chunk(2, dim=-1)

    def apply(x):
        shape = x.shape
        heads = x.numel() // (num_tokens * head_size) if num_tokens else 0
        x = x.to(compute).reshape(num_tokens, heads, head_size)
        x_rot = _apply_rotary_emb_torch(x[..., :rot_dim], cos, sin, is_neox)
        return torch.cat((x_rot, x[..., rot_dim:]), dim=-1).reshape(shape).to(query.dtype)

    return apply(query), None if key is None else apply(key)


# ---- Inputs ----------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def make_cache(max_position, rot_dim, dtype, base=10000.0):
    """vLLM's _compute_cos_sin_cache: cos | sin of position * inv_freq.
    Memoised (rope only reads it): building it dominates the small tests."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rot_dim, 2, dtype=torch.float) / rot_dim))
    freqs = torch.outer(torch.arange(max_position, dtype=torch.float), inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(dtype)


def at_offset(t, offset):
    """A contiguous copy of t starting `offset` elements into a fresh buffer."""
    base = torch.empty(t.numel() + offset, dtype=t.dtype, device=t.device)
    view = base[offset:].view(t.shape)
    view.copy_(t)
    return view


def make_inputs(num_tokens, num_heads, num_kv_heads, head_size, rot_dim, dtype, *,
                cache_dtype=None, max_position=1024, split_heads=False, batch=None,
                pos_dtype=torch.int64, offset=0, seed=0):
    g = torch.Generator().manual_seed(seed)
    lead = (num_tokens,) if batch is None else (batch, num_tokens // batch)
    positions = torch.randint(0, max_position, lead, generator=g).to(pos_dtype)

    def heads(n):
        shape = lead + ((n, head_size) if split_heads else (n * head_size,))
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 4).to(dtype)

    query = heads(num_heads)
    key = None if num_kv_heads is None else heads(num_kv_heads)
    cache = make_cache(max_position, rot_dim, cache_dtype or dtype)
    if offset:
        query, cache, positions = (at_offset(t, offset) for t in (query, cache, positions))
        key = None if key is None else at_offset(key, offset + 2)
    return positions, query, key, cache


def check_rope(device, positions, query, key, head_size, cache, is_neox):
    """Runs hetkern.rope on `device` and asserts bit-equality with the reference."""
    expected_q, expected_k = rope_reference(positions, query, key, head_size, cache, is_neox)
    positions, query, cache = (t.to(device) for t in (positions, query, cache))
    key = None if key is None else key.to(device)
    q_out, k_out = hetkern.rope(positions, query, key, head_size, cache, is_neox)
    assert q_out is query and k_out is key
    assert_bitwise_equal(query, expected_q)
    if key is not None:
        assert_bitwise_equal(key, expected_k)


# ---- CPU ---------------------------------------------------------------------


@pytest.mark.parametrize("is_neox", LAYOUTS)
@pytest.mark.parametrize("head_size", HEAD_SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_matches_reference(cpu_target, dtype, head_size, is_neox):
    for rot_dim in (head_size, head_size // 2 if head_size != 80 else 32):
        inputs = make_inputs(7, 4, 2, head_size, rot_dim, dtype, seed=head_size + rot_dim)
        check_rope("cpu", *inputs[:3], head_size, inputs[3], is_neox)


@pytest.mark.parametrize("is_neox", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_pair_counts_around_simd_widths(cpu_target, dtype, is_neox):
    """rot_dim / 2 pairs just below, at and above every vector width (full
    vectors, then the single-lane tail), with features past rot_dim."""
    for pairs in (1, 3, 7, 15, 17, 31, 33, 63, 65, 127, 129):
        rot_dim = 2 * pairs
        inputs = make_inputs(3, 2, 1, rot_dim + 3, rot_dim, dtype, seed=pairs)
        check_rope("cpu", *inputs[:3], rot_dim + 3, inputs[3], is_neox)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64], ids=str)
@pytest.mark.parametrize("is_neox", LAYOUTS)
def test_cpu_float32_cache(cpu_target, dtype, is_neox):
    inputs = make_inputs(9, 3, 1, 128, 64, dtype, cache_dtype=torch.float32, seed=3)
    check_rope("cpu", *inputs[:3], 128, inputs[3], is_neox)


@pytest.mark.parametrize("is_neox", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_misaligned_starts(cpu_target, dtype, is_neox):
    for offset in (1, 3):
        inputs = make_inputs(5, 3, 2, 80, 80, dtype, offset=offset, seed=offset)
        check_rope("cpu", *inputs[:3], 80, inputs[3], is_neox)


@pytest.mark.parametrize("is_neox", LAYOUTS)
def test_shapes_and_head_counts(is_neox):
    dtype = torch.bfloat16
    cases = [
        dict(num_tokens=0, num_heads=4, num_kv_heads=2),
        dict(num_tokens=1, num_heads=1, num_kv_heads=1),
        dict(num_tokens=17, num_heads=32, num_kv_heads=8),
        dict(num_tokens=33, num_heads=8, num_kv_heads=8),
        dict(num_tokens=129, num_heads=5, num_kv_heads=None),  # key=None
        dict(num_tokens=6, num_heads=3, num_kv_heads=2, split_heads=True),
        dict(num_tokens=12, num_heads=3, num_kv_heads=1, batch=3),  # (batch, seq) positions
        dict(num_tokens=12, num_heads=2, num_kv_heads=2, batch=4, split_heads=True),
        dict(num_tokens=11, num_heads=4, num_kv_heads=4, pos_dtype=torch.int32),
        dict(num_tokens=3, num_heads=0, num_kv_heads=2),  # no query heads
    ]
    for i, case in enumerate(cases):
        inputs = make_inputs(head_size=64, rot_dim=64, dtype=dtype, seed=i, **case)
        check_rope("cpu", *inputs[:3], 64, inputs[3], is_neox)


@pytest.mark.parametrize("is_neox", LAYOUTS)
def test_huge_rows(is_neox):
    """65536 features per token: many heads, and one huge head."""
    inputs = make_inputs(3, 128, 8, 512, 512, torch.bfloat16, max_position=16, seed=1)
    check_rope("cpu", *inputs[:3], 512, inputs[3], is_neox)
    inputs = make_inputs(2, 1, 1, 65536 + 6, 65536, torch.float32, max_position=4, seed=2)
    check_rope("cpu", *inputs[:3], 65536 + 6, inputs[3], is_neox)


def test_positions_from_the_whole_cache_and_random_cache_values(cpu_target):
    """First and last cache rows, repeated positions, and a cache of arbitrary
    values (not just cos/sin) so every rounding path is exercised."""
    g = torch.Generator().manual_seed(5)
    for dtype in DTYPES:
        cache = (torch.randn(10, 48, generator=g, dtype=torch.float64) * 3).to(dtype)
        positions = torch.tensor([0, 9, 9, 0, 4, 5, 6])
        query = (torch.randn(7, 2 * 64, generator=g, dtype=torch.float64) * 100).to(dtype)
        key = (torch.randn(7, 64, generator=g, dtype=torch.float64) * 1e-3).to(dtype)
        for is_neox in (True, False):
            check_rope("cpu", positions, query.clone(), key.clone(), 64, cache, is_neox)


def test_matches_vllm_forward_native_in_float32():
    """For float32 the reference is vLLM's forward_native as written."""
    positions, query, key, cache = make_inputs(13, 4, 2, 128, 64, torch.float32, seed=9)
    # forward_native computes in the query's dtype: here the reference itself.
    expected = rope_reference(positions, query, key, 128, cache, True)
    hetkern.rope(positions, query, key, 128, cache, True)
    assert_bitwise_equal(query, expected[0])
    assert_bitwise_equal(key, expected[1])


def test_numpy_in_place():
    positions, query, key, cache = make_inputs(9, 4, 2, 64, 32, torch.float32, seed=4)
    expected_q, expected_k = rope_reference(positions, query, key, 64, cache, False)
    q, k = query.numpy().copy(), key.numpy().copy()
    q_out, k_out = hetkern.rope(positions.numpy(), q, k, 64, cache.numpy(), False)
    assert q_out is q and k_out is k and type(q) is np.ndarray
    np.testing.assert_array_equal(q, expected_q.numpy())
    np.testing.assert_array_equal(k, expected_k.numpy())
    # Read-only inputs that rope only reads are fine.
    pos_ro, cache_ro = positions.numpy().copy(), cache.numpy().copy()
    pos_ro.flags.writeable = cache_ro.flags.writeable = False
    q2 = query.numpy().copy()
    hetkern.rope(pos_ro, q2, None, 64, cache_ro, False)
    np.testing.assert_array_equal(q2, expected_q.numpy())


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_threaded_results_equal_reference(threads):
    positions, query, key, cache = make_inputs(257, 32, 8, 128, 128, torch.bfloat16, seed=threads)
    expected_q, expected_k = rope_reference(positions, query, key, 128, cache, True)
    try:
        hetkern.set_num_threads(threads)
        hetkern.rope(positions, query, key, 128, cache, True)
    finally:
        hetkern.set_num_threads(0)
    assert_bitwise_equal(query, expected_q)
    assert_bitwise_equal(key, expected_k)


# ---- Bad input ----------------------------------------------------------------


def _good(dtype=torch.float32):
    positions = torch.tensor([0, 3, 1])
    query = torch.full((3, 2 * 8), 7.0, dtype=dtype)
    key = torch.full((3, 8), 5.0, dtype=dtype)
    cache = make_cache(4, 8, dtype)
    return positions, query, key, cache


def _call(positions=None, query=None, key="good", head_size=8, cache=None, is_neox=True):
    return lambda p, q, k, c: hetkern.rope(
        p if positions is None else positions, q if query is None else query,
        k if isinstance(key, str) else key, head_size, c if cache is None else cache, is_neox)


ERROR_CASES = [
    # (id, exception, message fragment, call(positions, query, key, cache))
    ("positions-float", ValueError, "'positions' has dtype float32; expected int64 or int32",
     _call(positions=torch.tensor([0.0, 1.0, 2.0]))),
    ("positions-int16", ValueError, "'positions' has dtype int16",
     _call(positions=torch.tensor([0, 1, 2], dtype=torch.int16))),
    ("positions-3d", ValueError, r"'positions' has shape \(1, 1, 3\); expected",
     _call(positions=torch.zeros(1, 1, 3, dtype=torch.int64))),
    ("positions-count", ValueError, r"'query' has shape \(3, 16\); expected \(\*S, heads",
     _call(positions=torch.tensor([0, 1]))),
    ("positions-negative", ValueError, r"'positions' holds -1 at flat index 2; expected values in \[0, 4\)",
     _call(positions=torch.tensor([0, 1, -1]))),
    ("positions-too-large", ValueError, r"'positions' holds 4 at flat index 2",
     _call(positions=torch.tensor([0, 1, 4], dtype=torch.int32))),
    ("positions-list", TypeError, "'positions' must be an array", _call(positions=[0, 1, 2])),
    ("positions-non-contiguous", ValueError, "'positions' must be contiguous",
     _call(positions=torch.tensor([0, 9, 1, 9, 2, 9])[::2])),
    ("head-size-zero", ValueError, "'head_size' is 0; expected > 0", _call(head_size=0)),
    ("head-size-negative", ValueError, "'head_size' is -8", _call(head_size=-8)),
    ("head-size-float", TypeError, "'head_size' must be an int", _call(head_size=8.0)),
    ("head-size-not-dividing", ValueError, "multiple of head_size = 6", _call(head_size=6)),
    ("rot-dim-over-head-size", ValueError, r"rot_dim \(its last dim\) even and in \[2, head_size = 4\]",
     _call(head_size=4, query=torch.zeros(3, 8), key=torch.zeros(3, 4))),
    ("rot-dim-odd", ValueError, "rot_dim", _call(cache=torch.zeros(4, 7))),
    ("cache-1d", ValueError, r"'cos_sin_cache' has shape \(8,\); expected \(max_position, rot_dim\)",
     _call(cache=torch.zeros(8))),
    ("cache-dtype", ValueError, "'cos_sin_cache' has dtype float64; expected float32",
     _call(cache=torch.zeros(4, 8, dtype=torch.float64))),
    ("query-int", ValueError, "'query' has dtype int32", _call(query=torch.zeros(3, 16, dtype=torch.int32))),
    ("query-list", TypeError, "'query' must be an array", _call(query=[[0.0] * 16] * 3)),
    ("query-non-contiguous", ValueError, "'query' must be contiguous", _call(query=torch.zeros(16, 3).t())),
    ("query-split-head-mismatch", ValueError, "its last dim is the head, expected head_size = 8",
     _call(query=torch.zeros(3, 4, 4))),
    ("key-dtype", ValueError, "'key' has dtype float16; expected float32",
     _call(key=torch.zeros(3, 8, dtype=torch.float16))),
    ("key-tokens", ValueError, r"'key' has shape \(2, 8\)", _call(key=torch.zeros(2, 8))),
    ("key-not-dividing", ValueError, "'key' has shape", _call(key=torch.zeros(3, 12))),
    ("is-neox-str", TypeError, "'is_neox' must be a bool", _call(is_neox="yes")),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_bad_input_raises_and_writes_nothing(case):
    _, exc, fragment, call = case
    positions, query, key, cache = _good()
    before = [bytes_of(t) for t in (query, key, cache, positions)]
    with pytest.raises(exc, match=fragment):
        call(positions, query, key, cache)
    assert [bytes_of(t) for t in (query, key, cache, positions)] == before


def test_overlapping_arrays_are_rejected():
    buf = torch.full((64,), 3.0)
    positions = torch.tensor([0, 1])
    cache = make_cache(4, 8, torch.float32)
    before = bytes_of(buf)
    with pytest.raises(ValueError, match="'query' overlaps 'key'"):
        hetkern.rope(positions, buf[:32].view(2, 16), buf[16:48].view(2, 16), 8, cache, True)
    with pytest.raises(ValueError, match="'query' overlaps 'key'"):
        hetkern.rope(positions, buf[:32].view(2, 16), buf[:32].view(2, 16), 8, cache, True)
    with pytest.raises(ValueError, match="'key' overlaps 'cos_sin_cache'"):
        hetkern.rope(positions, torch.zeros(2, 16), buf[:32].view(2, 16), 8, buf[:32].view(4, 8), True)
    assert bytes_of(buf) == before


def test_read_only_query_is_rejected():
    positions, query, key, cache = (t.numpy() for t in _good())
    query.flags.writeable = False
    with pytest.raises(ValueError, match="'query' is read-only; expected a writable array"):
        hetkern.rope(positions, query, key, 8, cache, True)
    assert (key == 5.0).all()
    query = query.copy()
    key.flags.writeable = False
    with pytest.raises(ValueError, match="'key' is read-only"):
        hetkern.rope(positions, query, key, 8, cache, True)
    assert (query == 7.0).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_device_mismatch():
    positions, query, key, cache = _good()
    before = bytes_of(query)
    with pytest.raises(ValueError, match="'positions' is on cuda:0; expected cpu"):
        hetkern.rope(positions.cuda(), query, key, 8, cache, True)
    with pytest.raises(ValueError, match="'cos_sin_cache' is on cpu; expected cuda:0"):
        hetkern.rope(positions.cuda(), query.cuda(), key.cuda(), 8, cache, True)
    assert bytes_of(query) == before


# ---- CUDA ----------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("is_neox", LAYOUTS)
@pytest.mark.parametrize("head_size", HEAD_SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_reference(dtype, head_size, is_neox):
    for rot_dim in (head_size, head_size // 2 if head_size != 80 else 32):
        for num_tokens in (1, 7, 1025):
            inputs = make_inputs(num_tokens, 32, 8, head_size, rot_dim, dtype, seed=num_tokens)
            check_rope("cuda", *inputs[:3], head_size, inputs[3], is_neox)


@requires_cuda
@pytest.mark.parametrize("is_neox", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_odd_sizes_offsets_and_caches(dtype, is_neox):
    """Pair counts that defeat vectorisation, misaligned starts (the scalar
    path), float32 caches, key=None, (batch, seq) positions, huge rows."""
    for pairs in (1, 3, 7, 15, 17, 31, 33, 63, 65):
        inputs = make_inputs(5, 3, 2, 2 * pairs + 2, 2 * pairs, dtype, seed=pairs)
        check_rope("cuda", *inputs[:3], 2 * pairs + 2, inputs[3], is_neox)
    for offset in (1, 3, 8):
        inputs = make_inputs(9, 4, 2, 128, 128, dtype, offset=offset, seed=offset)
        check_rope("cuda", *inputs[:3], 128, inputs[3], is_neox)
    inputs = make_inputs(9, 4, 2, 128, 64, dtype, cache_dtype=torch.float32, seed=1)
    check_rope("cuda", *inputs[:3], 128, inputs[3], is_neox)
    inputs = make_inputs(12, 4, None, 64, 64, dtype, batch=3, split_heads=True, pos_dtype=torch.int32)
    check_rope("cuda", *inputs[:3], 64, inputs[3], is_neox)
    inputs = make_inputs(3, 128, 8, 512, 512, dtype, max_position=16, seed=2)
    check_rope("cuda", *inputs[:3], 512, inputs[3], is_neox)
    inputs = make_inputs(2, 1, 1, 65536 + 8, 65536, dtype, max_position=4, seed=3)
    check_rope("cuda", *inputs[:3], 65536 + 8, inputs[3], is_neox)
    inputs = make_inputs(0, 4, 2, 64, 64, dtype)
    check_rope("cuda", *inputs[:3], 64, inputs[3], is_neox)


@requires_cuda
@pytest.mark.parametrize("is_neox", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_many_tokens_odd_head_counts(dtype, is_neox):
    """More tokens than the grid has blocks (each block loops over tokens),
    head counts of 7 + 3 and 5 without key, partial rotary, and tokens whose
    positions are out of range (left unchanged) among them."""
    for num_tokens, heads, kv_heads, rot_dim in [(4000, 7, 3, 128), (8000, 5, None, 128), (8000, 7, 3, 64)]:
        positions, query, key, cache = make_inputs(num_tokens, heads, kv_heads, 128, rot_dim, dtype,
                                                   seed=num_tokens + heads)
        check_rope("cuda", positions, query, key, 128, cache, is_neox)
    positions, query, key, cache = make_inputs(4000, 7, 3, 128, 128, dtype, seed=5)
    skipped = torch.zeros(4000, dtype=torch.bool)
    skipped[::97] = True
    positions[skipped] = cache.shape[0] + 3
    kept = ~skipped
    expected_q, expected_k = rope_reference(positions[kept], query[kept], key[kept], 128, cache, is_neox)
    q, k = query.cuda(), key.cuda()
    hetkern.rope(positions.cuda(), q, k, 128, cache.cuda(), is_neox)
    assert_bitwise_equal(q[kept.cuda()], expected_q)
    assert_bitwise_equal(k[kept.cuda()], expected_k)
    assert_bitwise_equal(q[skipped.cuda()], query[skipped])
    assert_bitwise_equal(k[skipped.cuda()], key[skipped])


@requires_cuda
@pytest.mark.parametrize("is_neox", LAYOUTS)
def test_cuda_out_of_range_positions_are_skipped(is_neox):
    """Tokens whose position is outside [0, max_position) stay unchanged; the
    cache sits between NaN-filled guard rows, so reading past it would put
    NaN into results."""
    max_position, rot_dim = 8, 64
    guarded = torch.full((max_position + 2, rot_dim), float("nan"))
    guarded[1:-1] = make_cache(max_position, rot_dim, torch.float32)
    cache = guarded[1:-1]
    positions = torch.tensor([0, -1, 7, 8, 3, 2**40, -(2**40), 5])
    query = torch.randn(8, 4 * 64)
    key = torch.randn(8, 2 * 64)
    valid = (positions >= 0) & (positions < max_position)
    expected_q, expected_k = query.clone(), key.clone()
    ref_q, ref_k = rope_reference(positions[valid], query[valid], key[valid], 64, cache, is_neox)
    expected_q[valid], expected_k[valid] = ref_q, ref_k
    q, k = query.cuda(), key.cuda()
    hetkern.rope(positions.cuda(), q, k, 64, cache.cuda(), is_neox)
    torch.cuda.synchronize()
    assert_bitwise_equal(q, expected_q)
    assert_bitwise_equal(k, expected_k)


@requires_cuda
def test_cuda_runs_on_current_stream():
    """On a side stream, query is filled only after a long GPU sleep; a kernel
    launched anywhere but on that stream would read it before the fill."""
    positions, query, key, cache = make_inputs(64, 8, 2, 128, 128, torch.float32)
    expected_q, _ = rope_reference(positions, torch.full_like(query, 3.0), key, 128, cache, True)
    positions, cache = positions.cuda(), cache.cuda()
    q = torch.zeros_like(query, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        q.fill_(3.0)
        hetkern.rope(positions, q, None, 128, cache, True)
    side.synchronize()
    assert_bitwise_equal(q, expected_q)


@requires_cuda
def test_cuda_graph_capture_and_replay():
    positions, query, key, cache = make_inputs(100, 32, 8, 128, 128, torch.bfloat16)
    positions, cache = positions.cuda(), cache.cuda()
    q, k = query.cuda(), key.cuda()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        hetkern.rope(positions, q, k, 128, cache, False)  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hetkern.rope(positions, q, k, 128, cache, False)
    new_q, new_k = torch.randn_like(query, dtype=torch.float32).bfloat16(), torch.randn_like(key, dtype=torch.float32).bfloat16()
    new_pos = torch.randint(0, cache.shape[0], positions.shape)
    q.copy_(new_q)
    k.copy_(new_k)
    positions.copy_(new_pos)
    graph.replay()
    torch.cuda.synchronize()
    expected_q, expected_k = rope_reference(new_pos, new_q, new_k, 128, cache.cpu(), False)
    assert_bitwise_equal(q, expected_q)
    assert_bitwise_equal(k, expected_k)


@requires_cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_cuda_second_device():
    positions, query, key, cache = make_inputs(7, 4, 2, 64, 64, torch.float16)
    expected_q, expected_k = rope_reference(positions, query, key, 64, cache, True)
    q, k = query.to("cuda:1"), key.to("cuda:1")
    hetkern.rope(positions.to("cuda:1"), q, k, 64, cache.to("cuda:1"), True)
    assert torch.cuda.current_device() == 0
    assert_bitwise_equal(q, expected_q)
    assert_bitwise_equal(k, expected_k)


def test_reference_is_a_rotation():
    """Guards the reference itself: rotating by the cache's angles preserves
    each pair's norm (to float32 cos/sin accuracy), for both layouts."""
    positions, query, key, cache = make_inputs(5, 2, 1, 64, 64, torch.float64, cache_dtype=torch.float64)
    for is_neox in (True, False):
        out, _ = rope_reference(positions, query, None, 64, cache, is_neox)
        x = query.view(5, 2, 64)
        o = out.view(5, 2, 64)
        if is_neox:
            n_in = x[..., :32] ** 2 + x[..., 32:] ** 2
            n_out = o[..., :32] ** 2 + o[..., 32:] ** 2
        else:
            n_in = x[..., ::2] ** 2 + x[..., 1::2] ** 2
            n_out = o[..., ::2] ** 2 + o[..., 1::2] ** 2
        assert torch.allclose(n_in, n_out, rtol=1e-6)  # float32 cos/sin
        assert not torch.allclose(out, query)
