"""Tests generated from the op table in opinfo.py: every op x dtype x sample
shape x variant is one test; on the CPU each runs on every Highway target
this CPU supports and at two alignments, on CUDA at two alignments. Plus the
layout check every op shares (non-contiguous input refused, out untouched).

Generated cases (op x dtype x shape x variant x target x alignment) are
counted by `python tests/test_opinfo.py`."""

from __future__ import annotations

import zlib

import pytest
import torch

import hetkern
from conftest import CPU_TARGETS, assert_bitwise_equal, bytes_of, requires_cuda
from opinfo import OPS


def _cases(ops):
    for op in ops:
        for dtype in op.dtypes:
            for shape in op.shapes:
                for variant in op.variants:
                    vid = ",".join(f"{k}={v}" for k, v in variant.items())
                    yield pytest.param(op, dtype, shape, variant,
                                       id=f"{op.name}-{str(dtype)[6:]}-{'x'.join(map(str, shape)) or 'scalar'}{'-' + vid if vid else ''}")


def _misaligned(t: torch.Tensor, offset: int) -> torch.Tensor:
    """A copy of t whose storage starts `offset` elements into a buffer."""
    if offset == 0 or t.dim() == 0:
        return t
    buf = torch.empty(t.numel() + offset, dtype=t.dtype, device=t.device)
    view = buf[offset:].view(t.shape)
    view.copy_(t)
    return view


def _compare(op, dtype, actual, expected):
    tol = op.tolerance(dtype)
    if isinstance(expected, (tuple, list)):
        for a, e in zip(actual, expected):
            _compare(op, dtype, a, e)
        return
    if tol is None:
        assert_bitwise_equal(actual, expected)
    else:
        torch.testing.assert_close(actual.cpu().double(), expected.cpu().double(),
                                   atol=tol.atol, rtol=tol.rtol, equal_nan=True)


def _check(op, dtype, shape, variant, device, offset):
    # Seeded by the case alone, so a failure repeats: Python's hash of a
    # string changes from process to process (a relu case once failed on an
    # input drawn that way and could not be drawn again).
    gen = torch.Generator().manual_seed(zlib.crc32(f"{op.name}/{dtype}/{shape}".encode()))
    inputs = [_misaligned(t, offset) for t in op.make_inputs(shape, dtype, device, gen)]
    expected = op.reference([t.clone() for t in inputs], **variant)
    _compare(op, dtype, op.call([t.clone() for t in inputs], None, **variant), expected)
    out = _misaligned(op.expected_out(inputs, **variant), offset)
    result = op.call([t.clone() for t in inputs], out, **variant)
    _compare(op, dtype, result, expected)
    if op.inplace:
        mine = [t.clone() for t in inputs]
        _compare(op, dtype, op.call(mine, mine[0], **variant), expected)


OFFSETS = (0, 1)


@pytest.mark.parametrize("op, dtype, shape, variant", list(_cases(OPS)))
def test_cpu(op, dtype, shape, variant):
    try:
        for target in CPU_TARGETS:
            hetkern.set_cpu_target(target)
            for offset in OFFSETS:
                _check(op, dtype, shape, variant, "cpu", offset)
    except AssertionError as e:
        raise AssertionError(f"on CPU target {target}, offset {offset}: {e}") from None
    finally:
        hetkern.set_cpu_target(None)


@requires_cuda
@pytest.mark.parametrize("op, dtype, shape, variant", list(_cases(OPS)))
def test_cuda(op, dtype, shape, variant):
    for offset in OFFSETS:
        _check(op, dtype, shape, variant, "cuda", offset)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_non_contiguous_input_is_refused(op):
    gen = torch.Generator().manual_seed(0)
    inputs = op.make_inputs(op.layout_shape, torch.float32, "cpu", gen)
    transposed = [inputs[0].t()] + inputs[1:]
    out = op.expected_out(transposed, **op.variants[0])
    before = bytes_of(out)
    with pytest.raises(ValueError, match="must be contiguous"):
        op.call(transposed, out)
    assert bytes_of(out) == before


if __name__ == "__main__":
    cases = list(_cases(OPS))
    print(f"{len(OPS)} ops, {len(cases)} op x dtype x shape x variant tests; "
          f"CPU: x {len(CPU_TARGETS)} targets x {len(OFFSETS)} alignments = "
          f"{len(cases) * len(CPU_TARGETS) * len(OFFSETS)} cases; "
          f"CUDA: x {len(OFFSETS)} alignments = {len(cases) * len(OFFSETS)} cases")
