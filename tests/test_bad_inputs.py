"""The bad-input catalogue: one entry per class of mistake, across the ops.
Each must raise TypeError/ValueError whose message names the argument and
what was expected, and leave every array the call could write untouched
(checked byte for byte). Device classes that need a GPU (CPU/CUDA mix, two
GPUs, CUDA on a CPU-only build) are in test_errors.py and test_build.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hetkern
from conftest import FakeDLPackArray, bytes_of


def t(*shape, dtype=torch.float32, fill=7.0):
    return torch.full(shape, fill, dtype=dtype)


def read_only(*shape):
    a = np.full(shape, 7.0, np.float32)
    a.flags.writeable = False
    return a


def rope_args(**change):
    args = dict(positions=torch.tensor([0, 1, 2]), query=t(3, 128), key=t(3, 64),
                head_size=64, cos_sin_cache=t(8, 64), is_neox=True)
    args.update(change)
    return args


# id -> (exception, message fragment, builder returning (call, arrays it could write))
CATALOGUE = {
    "not-an-array": (TypeError, "'x' must be an array",
                     lambda: ((lambda out: hetkern.relu([1.0, 2.0], out=out)), [t(2)])),
    "scalar-not-a-number": (TypeError, "'factor' must be a real number",
                            lambda: ((lambda out: hetkern.scale(t(4), "2", out=out)), [t(4)])),
    "axis-not-an-int": (TypeError, "'axis' must be an int or None",
                        lambda: ((lambda out: hetkern.sum(t(2, 3), axis="a", out=out)), [t(2)])),
    "integer-dtype": (ValueError, "'x' has dtype int32; expected one of float32",
                      lambda: ((lambda out: hetkern.exp(torch.ones(4, dtype=torch.int32), out=out)), [t(4)])),
    "complex-dtype": (ValueError, "'x' has dtype complex64",
                      lambda: ((lambda out: hetkern.scale(np.ones(4, np.complex64), 2.0, out=out)),
                               [np.full(4, 7.0, np.float32)])),
    "cast-to-int": (ValueError, "'dtype' is int32; expected one of",
                    lambda: ((lambda out: hetkern.cast(t(4), torch.int32, out=out)), [t(4)])),
    "out-dtype-mismatch": (ValueError, "'out' has dtype float64; expected float32",
                           lambda: ((lambda out: hetkern.silu(t(4), out=out)), [t(4, dtype=torch.float64)])),
    "operand-dtype-mismatch": (ValueError, "'y'",
                               lambda: ((lambda out: hetkern.add(t(4), t(4, dtype=torch.float16), out=out)), [t(4)])),
    "out-shape-mismatch": (ValueError, r"'out' has shape \(5,\)",
                           lambda: ((lambda out: hetkern.tanh(t(4), out=out)), [t(5)])),
    "not-broadcastable": (ValueError, r"'y' has shape \(3,\); expected the shape of 'x'",
                          lambda: ((lambda out: hetkern.add(t(3, 4), t(3), out=out)), [t(3, 4)])),
    "read-only-out": (ValueError, "'out' is read-only",
                      lambda: ((lambda out: hetkern.sigmoid(np.ones(4, np.float32), out=out)), [read_only(4)])),
    "non-contiguous-input": (ValueError, "'x' must be contiguous",
                             lambda: ((lambda out: hetkern.gelu(t(4, 6).t(), out=out)), [t(6, 4)])),
    "non-contiguous-out": (ValueError, "'out' must be contiguous",
                           lambda: ((lambda out: hetkern.softmax(t(4, 6), out=out.t())), [t(6, 4)])),
    "partial-overlap": (ValueError, "'out' partially overlaps 'x'",
                        lambda: (lambda buf: ((lambda _: hetkern.scale(buf[1:], 2.0, out=buf[:-1])), [buf]))(t(9))),
    "in-place-operands-overlap": (ValueError, "'residual' overlaps 'x'",
                                  lambda: (lambda x: ((lambda _: hetkern.fused_add_rmsnorm(x, x, t(8))), [x]))(t(2, 8))),
    "weight-wrong-length": (ValueError, "'weight' must have shape",
                            lambda: ((lambda out: hetkern.rmsnorm(t(2, 8), t(7), out=out)), [t(2, 8)])),
    "weight-wrong-dtype": (ValueError, "'weight'",
                           lambda: ((lambda out: hetkern.layernorm(t(2, 8), t(8, dtype=torch.float64), None, out=out)), [t(2, 8)])),
    "eps-not-positive": (ValueError, "'eps' is -1",
                         lambda: ((lambda out: hetkern.rmsnorm(t(2, 8), t(8), -1.0, out=out)), [t(2, 8)])),
    "eps-nan": (ValueError, "'eps' is nan",
                lambda: ((lambda out: hetkern.layernorm(t(2, 8), t(8), t(8), float("nan"), out=out)), [t(2, 8)])),
    "odd-gated-dimension": (ValueError, "the last dimension must be even",
                            lambda: ((lambda out: hetkern.silu_and_mul(t(3, 5), out=out)), [t(3, 2)])),
    "empty-row-max": (ValueError, "max of an empty row is undefined",
                      lambda: ((lambda out: hetkern.max(t(3, 0), out=out)), [t(3)])),
    "positions-out-of-range": (ValueError, "'positions' holds 9",
                               lambda: (lambda a: ((lambda _: hetkern.rope(**a)), [a["query"], a["key"]]))(
                                   rope_args(positions=torch.tensor([0, 9, 1])))),
    "positions-not-integer": (ValueError, "'positions' has dtype float32; expected int64 or int32",
                              lambda: (lambda a: ((lambda _: hetkern.rope(**a)), [a["query"], a["key"]]))(
                                  rope_args(positions=torch.tensor([0.0, 1.0, 2.0])))),
    "head-size-does-not-divide": (ValueError, "multiple of head_size",
                                  lambda: (lambda a: ((lambda _: hetkern.rope(**a)), [a["query"], a["key"]]))(
                                      rope_args(head_size=48))),
    "size-overflows-int64": (ValueError, "size in bytes fits in int64",
                             lambda: ((lambda _: hetkern.scale(FakeDLPackArray((2**61, 8)), 2.0,
                                                                out=FakeDLPackArray((2**61, 8)))), [t(1)])),
    "negative-dimension": (ValueError, r"has shape \(-4,\); expected non-negative dimensions",
                           lambda: ((lambda _: hetkern.relu(FakeDLPackArray((-4,)),
                                                             out=FakeDLPackArray((-4,)))), [t(1)])),
}


@pytest.mark.parametrize("case", list(CATALOGUE))
def test_bad_input_is_refused_and_nothing_is_written(case):
    exc, fragment, build = CATALOGUE[case]
    call, watched = build()
    before = [bytes_of(a) for a in watched]
    with pytest.raises(exc, match=fragment) as info:
        call(watched[0])
    assert str(info.value).startswith("hetkern."), "the message names the op"
    assert [bytes_of(a) for a in watched] == before, "a failed call wrote to an output"


def test_catalogue_has_at_least_twenty_classes():
    assert len(CATALOGUE) >= 20


@pytest.mark.parametrize("shape", [(2**61,), (2**31, 2**30), (2**32, 2**32), (3, 2**62), (2**40, -1)])
def test_size_past_int64_bytes_is_refused(shape):
    # float32: at most (2**63 - 1) // 4 == 2**61 - 1 elements; (2**32, 2**32)
    # and (3, 2**62) overflow int64 in the element count itself.
    with pytest.raises(ValueError, match="size in bytes fits in int64"):
        hetkern.scale(FakeDLPackArray(shape), 2.0, out=FakeDLPackArray(shape))


@pytest.mark.parametrize("shape", [(2**61 - 1,), (2**30, 2**31 - 1), (0, 2**62, 2**62), (2**61 - 1, 0)])
def test_size_at_the_limit_passes_the_size_check(shape):
    # x passes (the next check, out's shape, is what refuses the call: the
    # fake data pointer is never read).
    with pytest.raises(ValueError, match=r"'out' has shape \(1,\); expected"):
        hetkern.scale(FakeDLPackArray(shape), 2.0, out=FakeDLPackArray((1,)))
