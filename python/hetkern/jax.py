"""hetkern's ops as JAX functions: ``import hetkern.jax as hk; hk.rmsnorm(x, w)``.

Every op of the registry is a function of JAX arrays that works inside
``jax.jit`` (and eagerly) on CPU and on CUDA GPUs. Each call is one XLA FFI
custom call of the same libhetkern export that ``hetkern.<op>`` calls, made
through the ``jax-tvm-ffi`` package (``pip install hetkern[jax]``): XLA owns
every buffer, allocates the result, and hands the kernel its own CUDA stream.

- Functional ops return a new array; the Python API's ``out=`` does not
  exist here. In-place ops (fused_add_rmsnorm, rope) return the updated
  arrays, ``(x, residual)`` and ``(query, key)``: XLA aliases them to the
  inputs (``input_output_aliases``), so no copy is made where the inputs
  are not used again.
- Numbers, strings and ints (eps, factor, approximate, head_size, axis...)
  are static: Python values at trace time, not traced arrays.
- ``jax.vmap``: a row-wise or elementwise op runs once on the whole batch
  when the batched arguments are those the op treats row by row (x; x and
  residual; positions, query and key; dot's x and y) and the others (weights,
  caches, add's y) are not batched; anything else is mapped one slice at a
  time (``jax.lax.map``), still correct.
- Bad argument types raise TypeError naming the argument at trace time;
  what the library checks (dtypes, shapes) is reported when the kernel runs,
  as the library's message inside JAX's runtime error.
- Variants whose export takes a None (layernorm without bias, rope without
  key, the reductions' scratch argument) run through a small Python adapter
  inside the custom call; they hold the GIL for the call and are not
  captured into CUDA graphs.
"""

from __future__ import annotations

import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import jax_tvm_ffi
import tvm_ffi

from . import _lib, built_with_cuda
from ._ops import _CUDA_CHUNK, _check_arg
from ._registry import (ARRAY, ARRAY_KINDS, ARRAY_OR_NUMBER, AXIS, BOOL, DTYPE, INT, NUMBER,
                        OPS, OPTIONAL_ARRAY, REQUIRED, STR, Op, result_shape)

# Rows longer than _CUDA_CHUNK need float64 partials on CUDA, which the
# library allocates from the workspace that jax-tvm-ffi lends it (the last
# output of the custom call), in 128-byte aligned pieces.
_WORKSPACE_ALIGN = 128


def _platforms() -> tuple:
    platforms = ["cpu"]
    if built_with_cuda():
        try:
            if jax.devices("gpu"):
                platforms.append("gpu")
        except RuntimeError:  # no GPU backend in this JAX
            pass
    return tuple(platforms)


def _is_array(value) -> bool:
    return isinstance(value, (jax.Array, np.ndarray))


def _check(op: Op, values: dict) -> dict:
    """Arrays must be JAX or NumPy arrays; the rest as hetkern.<op> checks it."""
    checked = {}
    what = {ARRAY: "a JAX array", OPTIONAL_ARRAY: "a JAX array or None",
            ARRAY_OR_NUMBER: "a JAX array or a real number"}
    for a in op.args:
        v = values[a.name]
        if a.kind in ARRAY_KINDS and _is_array(v):
            checked[a.name] = jnp.asarray(v)
        elif a.kind == OPTIONAL_ARRAY and v is None:
            checked[a.name] = None
        elif a.kind in (ARRAY, OPTIONAL_ARRAY):
            raise TypeError(f"hetkern.jax.{op.name}: '{a.name}' must be {what[a.kind]}; got {type(v).__name__}")
        else:
            if a.kind == DTYPE and not isinstance(v, str):
                try:
                    v = jnp.dtype(v).name
                except TypeError:
                    pass
            try:
                checked[a.name] = _check_arg(op, a, v)  # numbers, strings, ints, dtypes
            except TypeError as e:
                if a.kind == ARRAY_OR_NUMBER:
                    raise TypeError(f"hetkern.jax.{op.name}: '{a.name}' must be {what[a.kind]}; "
                                    f"got {type(v).__name__}") from None
                raise TypeError(str(e).replace("hetkern.", "hetkern.jax.", 1)) from None
    return checked


# ---- custom-call targets -------------------------------------------------------

def _attr(kind: str, value):
    """A static argument as an XLA FFI attribute of the type the export takes."""
    if kind in (NUMBER, ARRAY_OR_NUMBER):
        return np.float64(value)
    if kind in (INT, AXIS):
        return np.int64(value)
    if kind == BOOL:
        return bool(value)
    return value  # STR


def _direct_spec(op: Op, present: dict):
    """jax-tvm-ffi's arg spec calling the export directly ("rets", "args",
    "attrs.<name>" in the export's order), or None where that cannot be
    said: a None in an argument position, or arrays not side by side."""
    spec = []
    for name in op.export:
        if name == "scratch":
            return None
        if name == "out" and not op.in_place:  # the result (in-place ops: an argument)
            spec.append("rets")
            continue
        kind = op.arg(name).kind
        if kind in (ARRAY, OPTIONAL_ARRAY) or (kind == ARRAY_OR_NUMBER and present[name] == "array"):
            if present[name] is None:
                return None
            if spec and spec[-1] == "args":
                continue
            if "args" in spec:
                return None
            spec.append("args")
        elif kind == DTYPE:
            continue
        else:
            if present[name] is None:
                return None
            spec.append(f"attrs.{name}")
    return spec


@functools.lru_cache(maxsize=None)
def _target(op_name: str, key: tuple, statics: tuple) -> tuple:
    """Registers (once) the custom-call target of one op variant; returns
    (target name, attribute names, whether it lends a workspace).
    `key`: per argument, "array", None (an absent optional array) or
    "static"; `statics`: the static values, only for adapter targets."""
    op = _OPS[op_name]
    present = dict(zip((a.name for a in op.args), key))
    export = getattr(_lib.module, op.name)
    spec = _direct_spec(op, present)
    workspace = "scratch" in op.export
    if spec is not None:
        function, attrs, graph_safe = export, tuple(s[6:] for s in spec if s.startswith("attrs.")), True
    else:
        function, attrs, graph_safe = _adapter(op, present, dict(statics)), (), False
        spec = ["args"] if op.in_place else ["rets", "args"]
    name = f"hetkern.{op.name}.{_target.cache_info().currsize}"
    for platform in _platforms():
        jax_tvm_ffi.register_ffi_target(
            name, function, spec, platform=platform, allow_cuda_graph=graph_safe,
            pass_owned_tensor=not graph_safe, use_last_output_for_alloc_workspace=workspace)
    return name, attrs, workspace


def _adapter(op: Op, present: dict, statics: dict):
    """A TVM-FFI function taking (results..., arrays...) that calls the
    export with None where an optional array is absent (and for scratch)."""
    export = getattr(_lib.module, op.name)
    arrays = [n for n in op.export if n in present
              and op.arg(n).kind in ARRAY_KINDS and present[n] == "array"]

    def adapter(*tensors):
        given = dict(zip((["out"] if not op.in_place else []) + arrays, tensors))
        export(*(given[n] if n in given else statics.get(n) for n in op.export))

    return tvm_ffi.convert(adapter)


def _workspace_bytes(shape, axis) -> int:
    numel = int(np.prod(shape, dtype=np.int64))
    cols = numel if axis is None or len(shape) == 0 else shape[-1]
    chunks = 0 if cols <= _CUDA_CHUNK else (numel // cols) * -(-cols // _CUDA_CHUNK)
    return chunks * 8 + 2 * _WORKSPACE_ALIGN


def _invoke(op: Op, checked: dict):
    """The custom call for checked arguments (no batching)."""
    key = tuple("static" if a.kind not in ARRAY_KINDS or (a.kind == ARRAY_OR_NUMBER and not _is_array(checked[a.name]))
                else ("array" if checked[a.name] is not None else None) for a in op.args)
    statics = tuple((a.name, checked[a.name]) for a, k in zip(op.args, key) if k == "static")
    direct = _direct_spec(op, dict(zip((a.name for a in op.args), key))) is not None
    name, attrs, workspace = _target(op.name, key, () if direct else statics)
    kinds = {a.name: a.kind for a in op.args}
    operands = [checked[n] for n in op.export if n in kinds
                and kinds[n] in ARRAY_KINDS and _is_array(checked[n])]
    attr_values = {n: _attr(kinds[n], checked[n]) for n in attrs}
    if op.in_place:
        written = [n for n in op.written if checked[n] is not None]
        order = [n for n in op.export if n in kinds and kinds[n] in ARRAY_KINDS
                 and _is_array(checked[n])]
        results = tuple(jax.ShapeDtypeStruct(checked[n].shape, checked[n].dtype) for n in written)
        aliases = {order.index(n): i for i, n in enumerate(written)}
        outs = jax.ffi.ffi_call(name, results, input_output_aliases=aliases,
                                vmap_method="sequential")(*operands, **attr_values)
        updated = dict(zip(written, outs))
        result = tuple(updated.get(n) for n in op.written)
        return result[0] if len(result) == 1 else result  # the one array an op writes
    lead = checked[op.arrays[0].name]
    dtype = jnp.dtype(checked[op.dtype_arg]) if op.dtype_arg else lead.dtype
    result = jax.ShapeDtypeStruct(result_shape(op, lead.shape, checked), dtype)
    if workspace:
        scratch = jax.ShapeDtypeStruct((_workspace_bytes(lead.shape, checked.get("axis")),), jnp.uint8)
        return jax.ffi.ffi_call(name, (result, scratch), vmap_method="sequential")(*operands, **attr_values)[0]
    return jax.ffi.ffi_call(name, result, vmap_method="sequential")(*operands, **attr_values)


# ---- batching ------------------------------------------------------------------

def _batched_call(op: Op, checked: dict):
    """`_invoke` under a custom vmap rule (see the module docstring)."""
    names = [a.name for a in op.args if a.kind in ARRAY_KINDS and _is_array(checked[a.name])]
    fixed = {n: v for n, v in checked.items() if n not in names}

    @jax.custom_batching.custom_vmap
    def call(*arrays):
        return _invoke(op, {**fixed, **dict(zip(names, arrays))})

    @call.def_vmap
    def rule(axis_size, in_batched, *arrays):
        batched = {n for n, b in zip(names, in_batched) if b}
        group = set(op.batch_args) & set(names)
        whole = (op.arrays[0].name if not op.in_place else op.written[0]) in batched
        # Row- or element-wise over the group: one call on the whole batch,
        # the group's unbatched members broadcast to it.
        args = [jnp.broadcast_to(a, (axis_size,) + a.shape) if n in group and n not in batched else a
                for n, a in zip(names, arrays)]
        if (whole and batched <= group and fixed.get("axis", -1) is not None
                and (op.name != "rope" or args[names.index("positions")].ndim <= 2)):
            result = _invoke(op, {**fixed, **dict(zip(names, args))})
        else:
            def one(sliced):
                it = iter(sliced)
                return _invoke(op, {**fixed, **{n: next(it) if n in batched else a
                                                for n, a in zip(names, arrays)}})
            result = jax.lax.map(one, [a for n, a in zip(names, arrays) if n in batched])
        return result, jax.tree_util.tree_map(lambda _: True, result)

    return call(*[checked[n] for n in names])


def _make(op: Op):
    params = [inspect.Parameter(a.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                default=inspect.Parameter.empty if a.default is REQUIRED else a.default)
              for a in op.args]
    signature = inspect.Signature(params)

    def function(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return _batched_call(op, _check(op, bound.arguments))

    function.__name__ = function.__qualname__ = op.name
    function.__module__ = __name__
    function.__signature__ = signature
    function.__doc__ = (op.doc + "\n\n    JAX version (hetkern.jax): no ``out``; "
                        + ("returns the updated arrays." if op.in_place else "returns a new array."))
    return function


_OPS = {op.name: op for op in OPS}
globals().update({op.name: _make(op) for op in OPS})
__all__ = [op.name for op in OPS]
