"""Shared fixtures: every CPU test runs once per Highway target this CPU
supports, and CUDA tests skip cleanly where no GPU is present."""

from __future__ import annotations

import ctypes
import os

# JAX (test_jax.py) would otherwise take 75% of the GPU at its first use, and
# the other tests (or pytest-xdist workers) sharing the GPU run out of memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np
import pytest
import torch

import hetkern

CPU_TARGETS = hetkern.available_cpu_targets()
HAVE_CUDA = hetkern.built_with_cuda() and torch.cuda.is_available()

requires_cuda = pytest.mark.skipif(
    not HAVE_CUDA, reason="needs a CUDA GPU and a CUDA build of hetkern"
)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _flushes_subnormals() -> bool:
    """Whether this thread's x86 MXCSR has FTZ or DAZ set (a subnormal float32
    times 1 gives 0)."""
    tiny = np.array([1e-40], dtype=np.float32)
    return bool((tiny * np.float32(1.0))[0] == 0)


@pytest.fixture(autouse=True)
def ieee_subnormals(request):
    """Every test starts with IEEE subnormals on the main thread. A library
    loaded by an earlier test in the same process (e.g. one linked with
    -ffast-math's crtfastmath) may leave FTZ/DAZ set, and then torch's
    references and hetkern's results disagree on subnormals depending on
    which thread computed them (seen in one pytest-xdist worker on the H100
    host). The test that left it set is reported as a warning."""
    yield
    if _flushes_subnormals():
        torch.set_flush_denormal(False)
        import warnings
        warnings.warn(f"{request.node.nodeid} left FTZ/DAZ set on the main thread; cleared")


@pytest.fixture(params=CPU_TARGETS)
def cpu_target(request):
    """Forces the CPU kernels onto one Highway target for the test."""
    hetkern.set_cpu_target(request.param)
    assert hetkern.cpu_target() == request.param
    yield request.param
    hetkern.set_cpu_target(None)


def assert_bitwise_equal(actual, expected):
    """Same dtype, shape and bits; NaNs match any NaN (payloads differ between
    torch's own CPU paths, so they are not part of the contract)."""
    actual = torch.as_tensor(actual).cpu()
    expected = torch.as_tensor(expected).cpu()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    both_nan = actual.isnan() & expected.isnan()
    int_t = _INT_VIEW[actual.element_size()]
    same = (actual.view(int_t) == expected.view(int_t)) | both_nan
    if not bool(same.all()):
        bad = (~same).nonzero()[:5].tolist()
        raise AssertionError(
            f"{int((~same).sum())} of {same.numel()} elements differ; first at {bad}: "
            f"got {actual[~same][:5].tolist()}, expected {expected[~same][:5].tolist()}"
        )


def random_tensor(n: int, dtype, device="cpu", seed: int = 0, offset: int = 0):
    """n random values (with a spread of magnitudes) starting `offset`
    elements into a fresh buffer, so the start is misaligned for offset != 0."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(n + offset, generator=g, dtype=torch.float64)
    base *= torch.exp2(torch.randint(-20, 20, (n + offset,), generator=g).double())
    return base.to(dtype).to(device)[offset:]


def bytes_of(a) -> bytes:
    a = torch.as_tensor(a) if not isinstance(a, np.ndarray) else torch.from_numpy(a)
    return a.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()


# ---- A DLPack array that only claims to exist -------------------------------
# Validation must refuse it before touching its (invalid) data pointer: used for
# a CUDA array handed to a CPU-only build and for shapes whose size overflows.


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
        ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class FakeDLPackArray:
    """Exports a float32 DLTensor of `shape` on `device_type` (1 CPU, 2 CUDA)
    whose data pointer is never valid."""

    def __init__(self, shape, device_type=1):
        self._device_type = device_type
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._managed = _DLManagedTensor()
        self._managed.dl_tensor = _DLTensor(0x10, _DLDevice(device_type, 0), len(shape),
                                            _DLDataType(2, 32, 1), self._shape, None, 0)

    def __dlpack_device__(self):
        return (self._device_type, 0)

    def __dlpack__(self, **_):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._managed), b"dltensor", None)
