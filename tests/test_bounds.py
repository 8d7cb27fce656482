"""CPU kernels touch nothing past the end of their arrays: every input and
output here ends exactly at an inaccessible (PROT_NONE) page, so a tail that
reads or writes one element too far (LoadN/StoreN misuse, an off-by-one
remainder loop) crashes the test process instead of passing unnoticed.
Sizes cover every tail length of every target's vectors."""

from __future__ import annotations

import ctypes
import mmap
import sys

import numpy as np
import pytest
import torch

import hetkern
from conftest import DTYPES

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="mprotect through ctypes")

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_PAGE = mmap.PAGESIZE
_PROT_NONE = 0  # not exported by the mmap module
_MAPS: list = []  # keeps the mappings alive for the session


def guarded_tensor(values: torch.Tensor) -> torch.Tensor:
    """A copy of the 1-d `values` whose last byte is followed by a PROT_NONE page."""
    nbytes = values.numel() * values.element_size()
    pages = (nbytes + _PAGE - 1) // _PAGE + 1
    m = mmap.mmap(-1, pages * _PAGE)
    _MAPS.append(m)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    assert _LIBC.mprotect(base + (pages - 1) * _PAGE, _PAGE, _PROT_NONE) == 0, ctypes.get_errno()
    usable = np.frombuffer(m, np.uint8, count=(pages - 1) * _PAGE)
    t = torch.from_numpy(usable[usable.size - nbytes:]).view(values.dtype)
    t.copy_(values)
    return t


SIZES = list(range(1, 40)) + [63, 65, 127, 129]


@pytest.mark.parametrize("dtype", DTYPES)
def test_cpu_kernels_stay_inside_their_arrays(cpu_target, dtype):
    gen = torch.Generator().manual_seed(0)
    for n in SIZES:
        def rand(k=n):
            return guarded_tensor(torch.randn(k, generator=gen, dtype=torch.float64).to(dtype))

        x, y, out = rand(), rand(), rand()
        for unary in (hetkern.exp, hetkern.sigmoid, hetkern.gelu, hetkern.relu, hetkern.softmax,
                      hetkern.log_softmax):
            unary(x, out=out)
            assert torch.equal(out, unary(x.clone()))
        hetkern.add(x, y, out=out)
        assert torch.equal(out, x + y)
        hetkern.silu_and_mul(rand(2 * n).view(1, 2 * n), out=out.view(1, n))
        for reduction in (hetkern.sum, hetkern.max, hetkern.norm):
            reduction(x)
        hetkern.dot(x, y)
        for to in DTYPES:
            converted = guarded_tensor(torch.zeros(n, dtype=to))
            hetkern.cast(x, to, out=converted)
            assert torch.equal(converted, x.to(to))
