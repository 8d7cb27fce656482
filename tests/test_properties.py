"""Property-based tests (hypothesis): random shapes, offsets and values —
NaN, ±inf, ±0, subnormals, values near the float16/bfloat16 overflow — for
every op in the table whose `property_values` allow arbitrary floats, compared
with the op's reference. Shrinking reports a minimal failing input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from opinfo import OPS
from test_opinfo import _compare, _misaligned

# Values that stress the conversions and the special cases of every kernel.
SPECIAL = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-45, -1e-45, 1e-40,
           5.96e-8, 6.1e-5, 65504.0, 65520.0, -65536.0, 3.39e38, 1.0, -1.0, 0.5]


def _values(dtype):
    finite = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)
    return st.one_of(st.sampled_from(SPECIAL), finite)


@st.composite
def _tensors(draw, op, dtype):
    shape = draw(st.sampled_from(op.shapes[:-1]))  # the largest shape is for test_opinfo
    n_inputs = len(op.make_inputs(shape, dtype, "cpu", torch.Generator().manual_seed(0)))
    inputs = []
    for template in op.make_inputs(shape, dtype, "cpu", torch.Generator().manual_seed(1)):
        values = draw(hnp.arrays(np.float32, template.shape, elements=_values(dtype)))
        inputs.append(torch.from_numpy(values).to(template.dtype))
    assert len(inputs) == n_inputs
    offset = draw(st.sampled_from([0, 1, 3]))
    return [_misaligned(t, offset) for t in inputs]


PROPERTY_OPS = [op for op in OPS if op.property_values]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", PROPERTY_OPS, ids=lambda op: op.name)
def test_matches_reference_on_any_values(op, dtype):
    if dtype not in op.dtypes:
        pytest.skip(f"{op.name} does not support {dtype}")

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(inputs=_tensors(op, dtype))
    def check(inputs):
        expected = op.reference([t.clone() for t in inputs])
        _compare(op, dtype, op.call([t.clone() for t in inputs], None), expected)

    check()
