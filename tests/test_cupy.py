"""CuPy (and any DLPack producer) in, the same library out (issue 10, item
4): results allocated by CuPy on the input's device, every op equal bit for
bit to the torch path of the same CUDA kernels, and the kernels run on
CuPy's current stream, a non-default one included (checked by capturing
the call into a CUDA graph on that stream)."""

from __future__ import annotations

import pytest
import torch

import hetkern
from conftest import HAVE_CUDA, assert_bitwise_equal
from hetkern._registry import OPS
from registry_samples import rope_cache, sample_args

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.skipif(not HAVE_CUDA, reason="needs a CUDA GPU and a CUDA build of hetkern")

DTYPES = [torch.float32, torch.float64, torch.float16]  # CuPy has no bfloat16


def to_cupy(values: dict) -> dict:
    return {k: cupy.from_dlpack(v.clone()) if isinstance(v, torch.Tensor) else v for k, v in values.items()}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_cupy_in_cupy_out_equals_the_torch_path(op, dtype):
    values = sample_args(op, dtype, "cuda")
    if op.name == "rope":
        values["cos_sin_cache"] = rope_cache(dtype, "cuda")
    if op.name == "cast":
        values["dtype"] = torch.float16 if dtype != torch.float16 else torch.float32
    through_torch = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in values.items()}
    expected = getattr(hetkern, op.name)(**through_torch)
    through_cupy = to_cupy(values)
    if op.name == "cast":
        through_cupy["dtype"] = str(values["dtype"]).removeprefix("torch.")
    got = getattr(hetkern, op.name)(**through_cupy)
    torch.cuda.synchronize()
    if op.in_place:
        got = got if len(op.written) > 1 else (got,)  # one written array comes back as itself
        assert all(g is through_cupy[n] for g, n in zip(got, op.written))  # the objects passed in
        for name in op.written:
            assert_bitwise_equal(torch.from_dlpack(through_cupy[name]), through_torch[name])
    else:
        assert isinstance(got, cupy.ndarray)
        assert got.device == through_cupy[op.arrays[0].name].device
        assert_bitwise_equal(torch.from_dlpack(got), expected)


def test_long_rows_reduce_with_a_cupy_scratch():
    x = cupy.random.standard_normal((3, 20000), dtype=cupy.float32)
    got = hetkern.sum(x)
    assert isinstance(got, cupy.ndarray)
    assert_bitwise_equal(torch.from_dlpack(got), hetkern.sum(torch.from_dlpack(x)))


@pytest.mark.parametrize("non_blocking", [True, False])
def test_runs_on_cupy_current_stream(non_blocking):
    # Captured on CuPy's current (non-default) stream: if the kernel ran on
    # any other stream, the capture would fail or the kernel would run at
    # once instead of at the graph's launch.
    x = cupy.arange(1 << 20, dtype=cupy.float32)
    w = cupy.ones(1024, cupy.float32)
    rows = x.reshape(1024, 1024)
    o = cupy.zeros_like(x)
    normed = cupy.zeros_like(rows)
    stream = cupy.cuda.Stream(non_blocking=non_blocking)
    with stream:
        stream.begin_capture()
        hetkern.scale(x, 2.0, out=o)
        hetkern.rmsnorm(rows, w, out=normed)
        graph = stream.end_capture()
    stream.synchronize()
    assert not bool(o.any()), "the kernel ran outside the capture"
    graph.launch(stream)
    stream.synchronize()
    assert bool((o == 2.0 * x).all())
    assert_bitwise_equal(torch.from_dlpack(normed), hetkern.rmsnorm(torch.from_dlpack(rows), torch.from_dlpack(w)))


def test_stream_order_without_sync():
    # Work queued on CuPy's stream before the call is finished before the
    # kernel reads; the result is ready for the next op on that stream.
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.ones(1 << 24, cupy.float32)
        x *= 3.0
        y = hetkern.scale(x, 2.0)
        ok = bool((y == 6.0).all())
    assert ok


def test_env_stream_is_restored():
    import tvm_ffi

    device = tvm_ffi.device("cuda", 0)
    before = tvm_ffi.get_raw_stream(device)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        hetkern.relu(cupy.ones(8, cupy.float32))
    stream.synchronize()
    assert tvm_ffi.get_raw_stream(device) == before


@pytest.mark.skipif(not HAVE_CUDA or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_second_device():
    with cupy.cuda.Device(1):
        x = cupy.ones((2, 8), cupy.float32)
    y = hetkern.softmax(x)
    assert y.device.id == 1
