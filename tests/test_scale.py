"""hetkern.scale against torch (and NumPy) on every dtype, size, alignment
and CPU target, and on CUDA where a GPU is present."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hetkern
from conftest import DTYPES, assert_bitwise_equal, random_tensor, requires_cuda

SIZES = [0, 1, 3, 17, 1023, 2**20 + 3]
OFFSETS = [0, 1, 3]
FACTORS = [2.0, 0.1, -3.7]


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_matches_torch_bitwise(cpu_target, dtype, n, offset):
    x = random_tensor(n, dtype, offset=offset)
    for factor in FACTORS:
        assert_bitwise_equal(hetkern.scale(x, factor), x * factor)


@pytest.mark.parametrize("n", [1, 17, 1023, 4099])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_in_numpy_out(cpu_target, dtype, n):
    x = np.random.default_rng(n).standard_normal(n + 1).astype(dtype)[1:]
    y = hetkern.scale(x, 0.3)
    assert type(y) is np.ndarray and y.dtype == dtype and y.shape == x.shape
    np.testing.assert_array_equal(y, np.multiply(x, 0.3))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_rounding_every_bit_pattern(cpu_target, dtype):
    """All 65536 16-bit patterns (subnormals, inf, NaN included) times factors
    that push results across rounding ties, overflow and underflow."""
    x = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    for factor in [1.0, 0.5, 1.5, 3.0, 1 / 3, 1e-3, 1e3, 2.0**-10, 2.0**12, -0.75]:
        assert_bitwise_equal(hetkern.scale(x, factor), x * factor)


def test_float32_special_values(cpu_target):
    g = torch.Generator().manual_seed(1)
    bits = torch.randint(-(2**31), 2**31 - 1, (1 << 16,), generator=g, dtype=torch.int64)
    x = bits.to(torch.int32).view(torch.float32)
    x[:8] = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-45, -1e-45, 3.4e38])
    for factor in [2.0, 0.5, -1e-30, float("inf"), 0.0]:
        assert_bitwise_equal(hetkern.scale(x, factor), x * factor)


def test_in_place(cpu_target):
    x = random_tensor(1027, torch.bfloat16, offset=1)
    expected = x * 1.25
    result = hetkern.scale(x, 1.25, out=x)
    assert result is x
    assert_bitwise_equal(x, expected)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5, 7), (2, 3, 4, 5)])
def test_shapes(shape):
    x = torch.randn(shape)
    y = hetkern.scale(x, -2.0)
    assert y.shape == x.shape
    assert_bitwise_equal(y, x * -2.0)
    xn = np.asarray(x.numpy())
    yn = hetkern.scale(xn, -2.0)
    assert type(yn) is np.ndarray and yn.shape == xn.shape
    np.testing.assert_array_equal(yn, xn * np.float32(-2.0))


def test_out_is_returned_and_written():
    x = np.linspace(-1, 1, 33, dtype=np.float32)
    out = np.empty_like(x)
    assert hetkern.scale(x, 4, out=out) is out
    np.testing.assert_array_equal(out, x * np.float32(4))


def test_integer_and_numpy_scalar_factors():
    x = np.arange(5, dtype=np.float64)
    np.testing.assert_array_equal(hetkern.scale(x, 3), x * 3)
    np.testing.assert_array_equal(hetkern.scale(x, np.float32(0.5)), x * 0.5)


def test_read_only_input_is_accepted():
    x = np.arange(6, dtype=np.float32)
    x.flags.writeable = False
    np.testing.assert_array_equal(hetkern.scale(x, 2.0), x * 2)


def test_non_contiguous_is_rejected_not_miscomputed():
    x = torch.arange(12.0).reshape(3, 4)
    with pytest.raises(ValueError, match="'x' must be contiguous"):
        hetkern.scale(x.t(), 2.0)
    # Contiguous views with an offset are fine.
    assert_bitwise_equal(hetkern.scale(x[1:], 2.0), x[1:] * 2.0)


def test_allocated_torch_out_follows_a_size_one_stride():
    # (1, 4) with strides (1, 1): contiguous for the library (a size-1
    # dimension's stride is free); the allocated out (torch.empty_like keeps
    # x's strides) is as well, and gets the right values.
    x = torch.arange(4.0).reshape(4, 1).t()
    assert x.stride() == (1, 1)
    assert_bitwise_equal(hetkern.scale(x, 2.0), x * 2.0)


# ---- CUDA ------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("n", SIZES + [2**24 + 5])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_matches_torch_bitwise(dtype, n, offset):
    x = random_tensor(n, dtype, device="cuda", offset=offset)
    for factor in FACTORS:
        y = hetkern.scale(x, factor)
        assert y.device == x.device and y.dtype == dtype
        assert_bitwise_equal(y, x * factor)


@requires_cuda
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_cuda_half_rounding_every_bit_pattern(dtype):
    x = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype).cuda()
    for factor in [1.0, 0.5, 1.5, 3.0, 1 / 3, 1e-3, 1e3, 2.0**-10, 2.0**12, -0.75]:
        assert_bitwise_equal(hetkern.scale(x, factor), x * factor)


@requires_cuda
def test_cuda_misaligned_out_relative_to_x():
    base = torch.randn(4099, device="cuda", dtype=torch.float16)
    out_base = torch.empty(4100, device="cuda", dtype=torch.float16)
    x, out = base[1:], out_base[2:4100]
    hetkern.scale(x, 3.0, out=out)
    assert_bitwise_equal(out, x * 3.0)


@requires_cuda
def test_cuda_in_place_and_shapes():
    x = torch.randn(3, 5, 7, device="cuda", dtype=torch.bfloat16)
    expected = x * 0.7
    assert hetkern.scale(x, 0.7, out=x) is x
    assert_bitwise_equal(x, expected)
    scalar = torch.tensor(3.0, device="cuda")
    assert_bitwise_equal(hetkern.scale(scalar, 2.0), scalar * 2.0)


@requires_cuda
def test_cuda_runs_on_current_stream():
    """On a side stream, x is filled only after a long GPU sleep; a kernel
    launched anywhere but on that stream would read x before the fill."""
    x = torch.zeros(1 << 20, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU cycles
        x.fill_(3.0)
        y = hetkern.scale(x, 2.0)
    side.synchronize()
    assert bool((y == 6.0).all())


@requires_cuda
def test_cuda_graph_capture_and_replay():
    x = torch.randn(1 << 16, device="cuda")
    out = torch.empty_like(x)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        hetkern.scale(x, 2.0, out=out)  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hetkern.scale(x, 2.0, out=out)
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    assert_bitwise_equal(out, x * 2.0)


@requires_cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_cuda_second_device():
    x = torch.randn(1000, device="cuda:1")
    y = hetkern.scale(x, 2.0)
    assert y.device == torch.device("cuda:1")
    assert torch.cuda.current_device() == 0
    assert_bitwise_equal(y, x * 2.0)


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_threaded_results_equal_single_threaded(threads):
    x = random_tensor(3 * 2**20 + 5, torch.bfloat16, offset=1)
    try:
        hetkern.set_num_threads(threads)
        assert hetkern.num_threads() == threads
        assert_bitwise_equal(hetkern.scale(x, 0.3), x * 0.3)
        xs = random_tensor(2**21 + 1, torch.float32)
        assert_bitwise_equal(hetkern.scale(xs, -1.5), xs * -1.5)
    finally:
        hetkern.set_num_threads(0)
