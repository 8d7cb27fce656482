"""Every registry op as a torch custom op, ``torch.ops.hetkern.<op>``.

Generated from the registry (`_registry.OPS`) with ``torch.library``:

- a schema per op: the Python API's arguments without ``out``; functional
  ops return a new tensor, in-place ops (fused_add_rmsnorm, rope) mark the
  arrays they write (``Tensor(a!)``) and return nothing, as vLLM's
  ``fused_add_rms_norm`` and ``rotary_embedding``. An argument that is an
  array or a number (add's ``y``) gets a second overload, ``<op>.Scalar``;
- CPU and CUDA kernels calling the same libhetkern export as ``hetkern.<op>``
  (CUDA: on torch's current stream, which TVM-FFI hands the library);
- a fake kernel (shapes and dtypes only) for torch.compile and FakeTensor;
  it allocates exactly as the real kernel does (contiguous);
- an Autograd kernel: without a backward, a gradient through a functional
  op raises at ``backward()``, and an in-place op refuses inputs that
  require grad; never a silently wrong or missing gradient.

``torch.ops.hetkern.<op>(...)`` given a non-tensor where a tensor belongs
raises TypeError naming the argument, like ``hetkern.<op>``.
"""

from __future__ import annotations

import torch
from torch._C import _after_autograd_keyset, _any_requires_grad, _AutoDispatchBelowAutograd

from . import _lib
from ._ops import _check_arg, _scratch
from ._registry import (ARRAY, ARRAY_OR_NUMBER, AXIS, BOOL, DTYPE, INT, NUMBER, OPS,
                        OPTIONAL_ARRAY, REQUIRED, STR, Op, result_shape)

NAMESPACE = "hetkern"
_LIBRARY = None  # the torch.library.Library; kept alive for the registrations

_SCHEMA_TYPES = {ARRAY: "Tensor", OPTIONAL_ARRAY: "Tensor?", NUMBER: "float", INT: "int",
                 BOOL: "bool", STR: "str", AXIS: "int?", DTYPE: "ScalarType"}


def _default(value) -> str:
    if isinstance(value, str):
        return '"' + value + '"'
    return repr(value)


def overloads(op: Op) -> list:
    """(overload name, schema, kind of each argument) of one op: one overload,
    or two ('' and 'Scalar') where an argument is an array or a number."""
    variants = [("", ARRAY)]
    if any(a.kind == ARRAY_OR_NUMBER for a in op.args):
        variants.append(("Scalar", NUMBER))
    result = []
    for overload, either in variants:
        params, kinds, alias = [], [], iter("abcdefgh")
        for a in op.args:
            kind = either if a.kind == ARRAY_OR_NUMBER else a.kind
            typ = _SCHEMA_TYPES[kind]
            if a.writes:
                typ = f"Tensor({next(alias)}!)" + ("?" if kind == OPTIONAL_ARRAY else "")
            params.append(f"{typ} {a.name}" + ("" if a.default is REQUIRED else f"={_default(a.default)}"))
            kinds.append(kind)
        returns = "()" if op.in_place else "Tensor"
        name = op.name + (f".{overload}" if overload else "")
        result.append((overload, f"{name}({', '.join(params)}) -> {returns}", tuple(kinds)))
    return result


def _result(op: Op, args: tuple):
    """The result tensor of a functional op, allocated the same way by the
    real kernel and the fake one: contiguous, on x's device."""
    x = args[0]
    values = {a.name: v for a, v in zip(op.args, args)}
    dtype = values[op.dtype_arg] if op.dtype_arg else x.dtype
    if op.shape.__name__ == "like" and dtype == x.dtype:
        return torch.empty_like(x, memory_format=torch.contiguous_format)
    return x.new_empty(result_shape(op, x.shape, values), dtype=dtype)


def _with_defaults(op: Op, args: tuple) -> tuple:
    """The dispatcher leaves out trailing arguments that equal their default."""
    return args + tuple(a.default for a in op.args[len(args):])


def _kernel(op: Op):
    """The CPU and CUDA kernel: one call of the export (which validates)."""
    export = getattr(_lib.module, op.name)
    names = [a.name for a in op.args]
    order = [names.index(n) if n in names else n for n in op.export]
    nargs = len(op.args)

    if op.in_place:
        def kernel(*args):
            if len(args) < nargs:
                args = _with_defaults(op, args)
            export(*[args[i] for i in order])
        return kernel

    if list(op.export) == ["out"] + names and op.shape.__name__ == "like" and op.dtype_arg is None:
        # Most ops: export(out, *args), out shaped like x.
        def kernel(*args):
            if len(args) < nargs:
                args = _with_defaults(op, args)
            out = torch.empty_like(args[0], memory_format=torch.contiguous_format)
            export(out, *args)
            return out
        return kernel

    def kernel(*args):
        args = _with_defaults(op, args)
        out = _result(op, args)
        # The reductions' CUDA scratch: None where torch lends the library its
        # allocator (the DLPack exchange API), else allocated here.
        scratch = _scratch(args[0], tuple(args[0].shape), args[-1]) if "scratch" in op.export else None
        export(*[out if i == "out" else scratch if i == "scratch" else args[i] for i in order])
        return out
    return kernel


def _fake(op: Op):
    if op.in_place:
        return lambda *args: None
    return lambda *args: _result(op, _with_defaults(op, args))


class _NoBackward(torch.autograd.Function):
    """Runs a functional op below autograd; its backward refuses."""

    @staticmethod
    def forward(ctx, qualname, overload, keyset, *args):
        ctx.qualname = qualname
        with _AutoDispatchBelowAutograd():
            return overload.redispatch(keyset & _after_autograd_keyset, *args)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            f"{ctx.qualname} has no backward: hetkern's kernels are inference kernels. "
            "Compute this op with torch's own ops where you need its gradient, or detach "
            "its inputs / use torch.no_grad() where you do not."
        )


def _autograd(op: Op, qualname: str, get_overload):
    overload = None

    def autograd_kernel(keyset, *args):
        nonlocal overload
        if overload is None:
            overload = get_overload()
        if torch.is_grad_enabled() and _any_requires_grad(*args):
            if op.in_place:
                raise RuntimeError(
                    f"{qualname} writes its inputs in place and has no backward; "
                    "call it under torch.no_grad() or on tensors that do not require grad"
                )
            return _NoBackward.apply(qualname, overload, keyset, *args)
        with _AutoDispatchBelowAutograd():
            return overload.redispatch(keyset & _after_autograd_keyset, *args)
    return autograd_kernel


class _CheckedPacket(torch._ops.OpOverloadPacket):
    """torch.ops.hetkern.<op>: torch's packet, whose argument-parsing
    failures (RuntimeError, NotImplementedError for None, or a TypeError
    or AttributeError from inside a kernel handed None) become the
    TypeError that hetkern.<op> raises, naming the argument."""

    def __call__(self, /, *args, **kwargs):
        try:
            return self._op(*args, **kwargs)
        except (RuntimeError, NotImplementedError, TypeError, AttributeError):
            _raise_type_error(self._hetkern_op, args, kwargs)
            raise


def _raise_type_error(op: Op, args: tuple, kwargs: dict) -> None:
    """TypeError for the first argument that is not of its registry kind."""
    values = dict(zip((a.name for a in op.args), args), **kwargs)
    what = {ARRAY: "a torch.Tensor", OPTIONAL_ARRAY: "a torch.Tensor or None",
            ARRAY_OR_NUMBER: "a torch.Tensor or a real number", DTYPE: "a torch.dtype"}
    for a in op.args:
        if a.name not in values:
            continue
        value = values[a.name]
        if isinstance(value, torch.Tensor) and a.kind in (ARRAY, OPTIONAL_ARRAY, ARRAY_OR_NUMBER):
            continue
        if (a.kind == OPTIONAL_ARRAY and value is None) or (a.kind == DTYPE and isinstance(value, torch.dtype)):
            continue
        if a.kind in what and a.kind != ARRAY_OR_NUMBER or a.kind == ARRAY_OR_NUMBER and _not_a_number(op, a, value):
            raise TypeError(f"torch.ops.hetkern.{op.name}: '{a.name}' must be {what[a.kind]}; "
                            f"got {type(value).__name__}") from None
        if a.kind not in what:
            try:
                _check_arg(op, a, value)  # numbers, strings, ints
            except TypeError as e:
                raise TypeError(f"torch.ops.{e}") from None


def _not_a_number(op: Op, arg, value) -> bool:
    try:
        _check_arg(op, arg, value)
        return False
    except TypeError:
        return True


def register() -> None:
    """Define torch.ops.hetkern.<op> for every registry op (once per process)."""
    global _LIBRARY
    if _LIBRARY is not None or hasattr(torch.ops, NAMESPACE) and _defined():
        return
    lib = torch.library.Library(NAMESPACE, "DEF")
    for op in OPS:
        kernel, fake = _kernel(op), _fake(op)
        for overload, schema, _ in overloads(op):
            lib.define(schema)
            name = op.name + (f".{overload}" if overload else "")
            qualname = f"{NAMESPACE}::{name}"
            lib.impl(name, kernel, "CPU")
            lib.impl(name, kernel, "CUDA")
            torch.library.register_fake(qualname, fake, lib=lib)

            def get_overload(op=op, overload=overload):
                return getattr(getattr(torch.ops.hetkern, op.name), overload or "default")
            lib.impl(name, _autograd(op, qualname, get_overload), "Autograd", with_keyset=True)
        packet = getattr(torch.ops.hetkern, op.name)
        packet.__class__ = _CheckedPacket
        packet._hetkern_op = op
    _LIBRARY = lib


def _defined() -> bool:
    try:
        torch._C._get_schema(f"{NAMESPACE}::{OPS[0].name}", "")
        return True
    except RuntimeError:
        return False
