"""Bad input raises TypeError/ValueError naming the argument, and writes nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hetkern
from conftest import HAVE_CUDA, bytes_of


def _out(n=8, dtype=np.float32):
    return np.full(n, 7.0, dtype=dtype)


CASES = [
    # (id, exception, message fragment, call(x, out))
    ("list-x", TypeError, "'x' must be an array", lambda out: hetkern.scale([1.0, 2.0], 2.0, out=out)),
    ("none-x", TypeError, "'x' must be an array", lambda out: hetkern.scale(None, 2.0, out=out)),
    ("str-factor", TypeError, "'factor' must be a real number", lambda out: hetkern.scale(np.ones(8, np.float32), "2", out=out)),
    ("complex-factor", TypeError, "'factor' must be a real number", lambda out: hetkern.scale(np.ones(8, np.float32), 1j, out=out)),
    ("int-dtype", ValueError, "'x' has dtype int32", lambda out: hetkern.scale(np.ones(8, np.int32), 2.0, out=out)),
    ("complex-dtype", ValueError, "'x' has dtype complex64", lambda out: hetkern.scale(np.ones(8, np.complex64), 2.0, out=out)),
    ("dtype-mismatch", ValueError, "'out' has dtype float32; expected float64", lambda out: hetkern.scale(np.ones(8), 2.0, out=out)),
    ("shape-mismatch", ValueError, r"'out' has shape \(8,\); expected \(9,\)", lambda out: hetkern.scale(np.ones(9, np.float32), 2.0, out=out)),
    ("shape-2d-vs-1d", ValueError, r"'out' has shape \(8,\); expected \(2, 4\)", lambda out: hetkern.scale(np.ones((2, 4), np.float32), 2.0, out=out)),
    ("non-contiguous-x", ValueError, "'x' must be contiguous", lambda out: hetkern.scale(np.ones(16, np.float32)[::2], 2.0, out=out)),
    ("out-list", TypeError, "'out' must be an array", lambda out: hetkern.scale(np.ones(8, np.float32), 2.0, out=[0.0] * 8)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_and_writes_nothing(case):
    _, exc, fragment, call = case
    out = _out()
    before = bytes_of(out)
    with pytest.raises(exc, match=fragment):
        call(out)
    assert bytes_of(out) == before


def test_read_only_out():
    x = np.ones(8, np.float32)
    out = _out()
    out.flags.writeable = False
    with pytest.raises(ValueError, match="'out' is read-only"):
        hetkern.scale(x, 2.0, out=out)
    assert (out == 7.0).all()


def test_non_contiguous_out():
    x = np.ones(8, np.float32)
    backing = np.full(16, 7.0, np.float32)
    with pytest.raises(ValueError, match="'out' must be contiguous"):
        hetkern.scale(x, 2.0, out=backing[::2])
    assert (backing == 7.0).all()


def test_partial_overlap_is_rejected():
    buf = np.arange(10, dtype=np.float32)
    before = buf.copy()
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):
        hetkern.scale(buf[1:], 2.0, out=buf[:-1])
    np.testing.assert_array_equal(buf, before)


@pytest.mark.parametrize("call", [
    lambda x: hetkern.scale(x, 2.0),
    lambda x: hetkern.add(x, 1.0),
    lambda x: hetkern.relu(x),
    lambda x: hetkern.gelu(x),
    lambda x: hetkern.softmax(x),
    lambda x: hetkern.rmsnorm(x, torch.ones(3)),
    lambda x: hetkern.cast(x, torch.float16),
], ids=["scale", "add", "relu", "gelu", "softmax", "rmsnorm", "cast"])
def test_allocating_call_on_a_transposed_tensor_names_x(call):
    # The out allocated for a dense non-contiguous x copies its strides
    # (torch.empty_like); the error must still be about 'x'.
    with pytest.raises(ValueError, match="'x' must be contiguous"):
        call(torch.ones(3, 4).t())


def test_unknown_cpu_target():
    with pytest.raises(ValueError, match="expected \"auto\" or one of"):
        hetkern.set_cpu_target("NOT_A_TARGET")
    with pytest.raises(TypeError, match="'name' must be a str"):
        hetkern.set_cpu_target(3)
    assert hetkern.cpu_target() == hetkern.available_cpu_targets()[0]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_device_mismatch():
    x = torch.ones(8, device="cuda")
    out = torch.full((8,), 7.0)
    with pytest.raises(ValueError, match="'out' is on cpu; expected cuda:0"):
        hetkern.scale(x, 2.0, out=out)
    assert (out == 7.0).all()


@pytest.mark.skipif(
    hetkern.built_with_cuda() or not torch.cuda.is_available(), reason="needs a CPU-only build on a GPU machine"
)
def test_cuda_tensor_on_cpu_only_build():
    with pytest.raises(ValueError, match="built without CUDA"):
        hetkern.scale(torch.ones(8, device="cuda"), 2.0)


@pytest.mark.skipif(not HAVE_CUDA or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_gpus():
    x = torch.ones(8, device="cuda:0")
    out = torch.full((8,), 7.0, device="cuda:1")
    with pytest.raises(ValueError, match="'out' is on cuda:1; expected cuda:0"):
        hetkern.scale(x, 2.0, out=out)
    assert (out == 7.0).all()


def test_set_num_threads_rejects_bad_values():
    with pytest.raises(ValueError, match="'n' is -1; expected >= 1"):
        hetkern.set_num_threads(-1)
    with pytest.raises(TypeError, match="'n' must be an int"):
        hetkern.set_num_threads(2.5)
