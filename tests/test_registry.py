"""The op registry (python/hetkern/_registry.py) and what is generated from it:
the public functions, torch.ops.hetkern, hetkern.jax; and typed errors for
good (issue 10, items 1 and 6): every array argument of every op, given a
list, tuple, None, str, dict or a bare number, raises TypeError naming the
argument and writes nothing, through all three ways in."""

from __future__ import annotations

import importlib.util
import inspect

import numpy as np
import pytest
import torch

import hetkern
from conftest import assert_bitwise_equal, bytes_of
from hetkern._registry import ARRAY_KINDS, OPS, REQUIRED
from registry_samples import NOT_ARRAYS, bad_values_for, sample_args

HAVE_JAX = importlib.util.find_spec("jax") is not None and importlib.util.find_spec("jax_tvm_ffi") is not None
requires_jax = pytest.mark.skipif(not HAVE_JAX, reason="needs jax and jax-tvm-ffi (pip install hetkern[jax])")


def _call_public(op, values, out=None):
    kwargs = {} if op.in_place or out is None else {"out": out}
    return getattr(hetkern, op.name)(**values, **kwargs)


def _clone(values):
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in values.items()}


# ---- the generated functions ----------------------------------------------------

@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_public_function_follows_the_registry(op):
    fn = getattr(hetkern, op.name)
    assert op.name in hetkern.__all__
    params = list(inspect.signature(fn).parameters.values())
    expected = [a.name for a in op.args] + ([] if op.in_place else ["out"])
    assert [p.name for p in params] == expected
    for p, a in zip(params, op.args):
        assert (p.default is inspect.Parameter.empty) == (a.default is REQUIRED)
        if a.default is not REQUIRED:
            assert p.default == a.default
    assert fn.__doc__ == op.doc and fn.__name__ == op.name


def test_registry_names_are_unique_and_exports_exist():
    names = [op.name for op in OPS]
    assert len(names) == len(set(names))
    for op in OPS:
        assert set(op.export) - {"out", "scratch"} <= {a.name for a in op.args} | set(), op.name
        # "out" in the export: the result, or (the quant norms) a written argument.
        assert op.in_place == ("out" not in op.export or any(a.name == "out" and a.writes for a in op.args)), op.name
        assert all(op.arg(n).is_array for n in op.written), op.name
        assert hasattr(hetkern._lib.module, op.name)


def test_every_registry_op_has_an_opinfo_entry():
    # tests/opinfo.py holds the references and tolerances; a registry op
    # without an entry would go untested against its reference.
    from opinfo import OPS as OPINFOS

    assert {op.name for op in OPS} <= {info.name for info in OPINFOS}


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_torch_op_equals_the_python_function(op):
    values = sample_args(op)
    direct, through_torch = _clone(values), _clone(values)
    expected = _call_public(op, direct)
    got = getattr(torch.ops.hetkern, op.name)(**through_torch)
    if op.in_place:
        assert got is None  # the schema returns (); the tensors are updated in place
        for name in op.written:
            assert_bitwise_equal(through_torch[name], direct[name])
    else:
        assert_bitwise_equal(got, expected)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_torch_schema_marks_exactly_the_written_arguments(op):
    for overload in getattr(torch.ops.hetkern, op.name).overloads():
        schema = getattr(getattr(torch.ops.hetkern, op.name), overload)._schema
        written = {a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write}
        assert written == set(op.written)
        assert schema.is_mutable == op.in_place
        assert len(schema.returns) == (0 if op.in_place else 1)
        assert [a.name for a in schema.arguments] == [a.name for a in op.args]


@pytest.mark.parametrize("op", [op for op in OPS if op.row_strided and not op.in_place], ids=lambda op: op.name)
def test_fake_kernel_takes_row_strided_views_and_returns_contiguous(op):
    # vLLM's qkv.split views: last dimension contiguous, rows strided. The
    # fake kernel (what torch.compile traces) neither refuses nor copies them.
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        values = sample_args(op)
        x = values["x"]
        wide = torch.empty(x.shape[0], 3 * x.shape[1], dtype=x.dtype)
        values["x"] = wide[:, x.shape[1]:2 * x.shape[1]]
        assert not values["x"].is_contiguous()
        out = getattr(torch.ops.hetkern, op.name)(**values)
        assert out.is_contiguous()
        expected = hetkern._registry.result_shape(op, x.shape, values)
        assert tuple(out.shape) == expected


# ---- typed errors ----------------------------------------------------------------

def _cases():
    for op in OPS:
        for arg in op.args:
            if arg.kind in ARRAY_KINDS:
                for bad in bad_values_for(arg):
                    yield pytest.param(op, arg.name, bad, id=f"{op.name}-{arg.name}-{bad}")


CASES = list(_cases())


def _watched(op, values, out):
    return [values[n] for n in op.written] + ([] if out is None else [out])


@pytest.mark.parametrize("op,name,bad", CASES)
@pytest.mark.parametrize("array_type", ["torch", "numpy"])
def test_not_an_array_raises_type_error_and_writes_nothing(op, name, bad, array_type):
    values = sample_args(op)
    out = None
    if not op.in_place:
        out = torch.full_like(_call_public(op, _clone(values)), 7.0)
    if array_type == "numpy":
        if any(v.dtype == torch.bfloat16 for v in values.values() if isinstance(v, torch.Tensor)):
            pytest.skip("NumPy has no bfloat16")
        values = {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in values.items()}
        out = None if out is None else out.numpy()
        if "dtype" in values:
            values["dtype"] = np.float32
    values[name] = NOT_ARRAYS[bad]()
    watched = _watched(op, values, out)
    before = [bytes_of(a) for a in watched if not isinstance(a, (list, tuple, dict, str, float, type(None)))]
    with pytest.raises(TypeError, match=f"hetkern.{op.name}: '{name}' must be") as info:
        _call_public(op, values, out)
    assert type(info.value) is TypeError
    assert [bytes_of(a) for a in watched if not isinstance(a, (list, tuple, dict, str, float, type(None)))] == before


@pytest.mark.parametrize("op,name,bad", CASES)
def test_not_a_tensor_through_torch_ops_raises_type_error(op, name, bad):
    values = sample_args(op)
    values[name] = NOT_ARRAYS[bad]()
    watched = [values[n] for n in op.written if isinstance(values[n], torch.Tensor)]
    before = [bytes_of(a) for a in watched]
    with pytest.raises(TypeError, match=f"torch.ops.hetkern.{op.name}: '{name}' must be"):
        getattr(torch.ops.hetkern, op.name)(**values)
    assert [bytes_of(a) for a in watched] == before


@requires_jax
@pytest.mark.parametrize("op,name,bad", CASES)
def test_not_an_array_through_jax_raises_type_error(op, name, bad):
    import hetkern.jax as hk

    values = {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in sample_args(op).items()}
    if "dtype" in values:
        values["dtype"] = "float32"
    values[name] = NOT_ARRAYS[bad]()
    with pytest.raises(TypeError, match=f"hetkern.jax.{op.name}: '{name}' must be"):
        getattr(hk, op.name)(**values)


def test_every_array_argument_of_every_op_is_covered():
    covered = {(p.values[0].name, p.values[1]) for p in CASES}
    expected = {(op.name, a.name) for op in OPS for a in op.args if a.kind in ARRAY_KINDS}
    assert covered == expected
    assert {p.values[2] for p in CASES} == set(NOT_ARRAYS)
