"""The public functions ``hetkern.<op>``, generated from the op registry.

Per-call Python work is kept to a minimum (docs/performance.md, "Call
overhead"): for NumPy arrays and torch tensors the caller's objects go
straight to the TVM-FFI export, inside one ``try``. Only when TVM-FFI refuses
an argument (not an array, not a number, a read-only NumPy array, which NumPy
exports only through versioned DLPack), or when the arrays come from another
library, does `call_checked` run: it checks every argument against its
registry kind (TypeError/ValueError naming it), allocates the result with the
caller's own library and, for CUDA arrays of other libraries (CuPy, ...),
runs the call on that library's current stream.

The functions are generated as source (`make_function`) so that each keeps
the hand-written fast path: no helper frame, no argument tuple, one type
test of the first array (native or not) and one call of the export.
"""

from __future__ import annotations

import linecache
import math
import sys

import numpy as np
import tvm_ffi
from tvm_ffi import from_dlpack as _from_dlpack

from . import _lib
from ._registry import (ARRAY, ARRAY_OR_NUMBER, AXIS, BOOL, DTYPE, DTYPE_NAMES, INT, NUMBER,
                        OPTIONAL_ARRAY, OPS, REQUIRED, STR, Op, reduced, result_shape)

_ndarray = np.ndarray


class _NeverAnArray:
    """Stands in for torch.Tensor in the fast path while torch is not loaded."""


def _is_torch_tensor(a) -> bool:
    # torch is never imported here: a caller holding a tensor has imported it.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(a, torch.Tensor)


# ---- argument checks (the slow path) ------------------------------------------

def _array_error(op: str, name: str, a, what: str = "an array") -> TypeError:
    return TypeError(
        f"hetkern.{op}: '{name}' must be {what} (numpy.ndarray, torch.Tensor or another "
        f"DLPack-exporting array); got {type(a).__name__}"
    )


def _check_array(op: str, name: str, a):
    """`a` as libhetkern accepts it; TypeError for anything but an array."""
    if type(a) is _ndarray:
        if a.dtype.name == "float8_e4m3fn":
            # ml_dtypes' fp8 cannot cross DLPack; the quant norms take its bits.
            a = a.view(np.uint8)
        # NumPy exports read-only arrays only through versioned DLPack.
        return a if a.flags.writeable else _from_dlpack(a.__dlpack__(max_version=(1, 0)))
    if hasattr(a, "__dlpack__"):
        return a
    raise _array_error(op, name, a)


def _scalar(op: str, name: str, value) -> float:
    """A real Python/NumPy number (or 0-d array) as float; TypeError otherwise.
    Strings are refused even where float() would parse them."""
    if type(value) is float:
        return value
    if hasattr(value, "__float__") and not isinstance(value, (complex, np.complexfloating, str)):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"hetkern.{op}: '{name}' must be a real number; got {type(value).__name__}")


def _axis(op: str, value):
    if value is None:
        return None
    if not isinstance(value, (bool, np.bool_)):
        try:
            return int(value.__index__())
        except (AttributeError, TypeError):
            pass
    raise TypeError(f"hetkern.{op}: 'axis' must be an int or None; got {type(value).__name__}")


def _dtype_name(op: str, dtype) -> str:
    """The hetkern name of a torch dtype, NumPy dtype/type or dtype string."""
    if isinstance(dtype, str):
        name = dtype
    else:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(dtype, torch.dtype):
            name = str(dtype).removeprefix("torch.")
        else:
            try:
                name = np.dtype(dtype).name
            except TypeError:
                raise TypeError(
                    f"hetkern.{op}: 'dtype' must be a torch.dtype, a NumPy dtype or a dtype name; "
                    f"got {type(dtype).__name__}"
                ) from None
    if name not in DTYPE_NAMES:
        raise ValueError(f"hetkern.{op}: 'dtype' is {name}; expected one of {', '.join(DTYPE_NAMES)}")
    return name


def _check_arg(op: Op, arg, value):
    """One argument of the slow path, checked against its registry kind."""
    name, kind = arg.name, arg.kind
    if kind == ARRAY or (kind == OPTIONAL_ARRAY and value is not None):
        if arg.writes and type(value) is _ndarray and not value.flags.writeable:
            raise ValueError(f"hetkern.{op.name}: '{name}' is read-only; expected a writable array")
        if type(value) is _ndarray or hasattr(value, "__dlpack__"):
            return _check_array(op.name, name, value)
        raise _array_error(op.name, name, value, "an array or None" if kind == OPTIONAL_ARRAY else "an array")
    if kind == OPTIONAL_ARRAY:
        return None
    if kind == ARRAY_OR_NUMBER:
        if type(value) is _ndarray or hasattr(value, "__dlpack__"):
            return _check_array(op.name, name, value)
        try:
            return _scalar(op.name, name, value)
        except TypeError:
            raise TypeError(f"hetkern.{op.name}: '{name}' must be an array or a real number; "
                            f"got {type(value).__name__}") from None
    if kind == NUMBER:
        return _scalar(op.name, name, value)
    if kind == INT:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"hetkern.{op.name}: '{name}' must be an int; got {type(value).__name__}")
        return int(value)
    if kind == BOOL:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"hetkern.{op.name}: '{name}' must be a bool; got {type(value).__name__}")
        return bool(value)
    if kind == STR:
        if not isinstance(value, str):
            raise TypeError(f"hetkern.{op.name}: '{name}' must be a str; got {type(value).__name__}")
        return value  # the library refuses strings it does not know with ValueError
    if kind == AXIS:
        return _axis(op.name, value)
    if kind == DTYPE:
        return _dtype_name(op.name, value)
    raise AssertionError(f"unknown argument kind {kind!r}")


# ---- results in the caller's library --------------------------------------------

def _library_dtype(op: str, like, name: str):
    """The dtype called `name` in the library of the array `like`."""
    if type(like) is _ndarray:
        if name == "bfloat16":
            raise TypeError(f"hetkern.{op}: NumPy has no bfloat16; cast a torch tensor instead")
        return np.dtype(name)
    if _is_torch_tensor(like):
        return getattr(sys.modules["torch"], name)
    xp = _namespace(like)
    dtype = getattr(xp, name, None) if xp is not None else None
    if dtype is None:
        raise TypeError(f"hetkern.{op}: no {name} dtype known for arrays of type {type(like).__name__}")
    return dtype


def _namespace(a):
    """The array library of `a` for allocation: its array-API namespace, or
    its top-level module where that has `empty` (CuPy, ...); None otherwise."""
    if hasattr(a, "__array_namespace__"):
        try:
            return a.__array_namespace__()
        except Exception:  # noqa: BLE001 (a namespace that refuses is no namespace)
            pass
    module = sys.modules.get(type(a).__module__.partition(".")[0])
    return module if module is not None and hasattr(module, "empty") else None


def _new_array(op: str, like, shape=None, dtype=None):
    """A new contiguous array of `like`'s library and device; `shape` and
    `dtype` (in that library's own dtype type) default to `like`'s."""
    if type(like) is _ndarray:
        if shape is None and dtype is None:
            return np.empty_like(like)
        return np.empty(like.shape if shape is None else tuple(shape), like.dtype if dtype is None else dtype)
    if _is_torch_tensor(like):
        torch = sys.modules["torch"]
        shape = like.shape if shape is None else tuple(shape)
        return torch.empty(shape, dtype=like.dtype if dtype is None else dtype, device=like.device)
    shape = tuple(like.shape) if shape is None else tuple(shape)
    dtype = like.dtype if dtype is None else dtype
    xp = _namespace(like)
    if xp is None:
        raise TypeError(f"hetkern.{op}: pass out= for arrays of type {type(like).__name__}")
    if _is_cupy(like):
        with like.device:  # CuPy allocates on its current device
            return xp.empty(shape, dtype=dtype)
    try:
        return xp.empty(shape, dtype=dtype, device=like.device)
    except TypeError:
        return xp.empty(shape, dtype=dtype)


# ---- arrays of other libraries on CUDA: their stream ---------------------------
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13


def _is_cupy(a) -> bool:
    return type(a).__module__.startswith("cupy")


def _cuda_device(a):
    """The CUDA device index of a DLPack array, or None when not on CUDA."""
    try:
        device_type, device_id = a.__dlpack_device__()
    except (AttributeError, TypeError):
        return None
    return int(device_id) if int(device_type) in (_DL_CUDA, _DL_CUDA_MANAGED) else None


def _current_stream(a, device_id: int) -> int:
    """The stream the library of `a` runs its own work on now: CuPy's current
    stream; 0 (the legacy default stream) for libraries hetkern cannot ask."""
    if _is_cupy(a):
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device_id):
            return int(cupy.cuda.get_current_stream().ptr)
    return 0


class _OnStream:
    """Exports `array` through DLPack for a consumer running on `stream`, so
    that its library orders its own work before ours without a sync."""

    __slots__ = ("array", "stream")

    def __init__(self, array, stream: int):
        self.array, self.stream = array, stream

    def __dlpack__(self, **_):
        # DLPack: 1 is the legacy default stream (0 is not a valid value).
        return self.array.__dlpack__(stream=self.stream or 1)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def _scratch(x, shape, axis):
    """The float64 partials buffer the CUDA reductions need for rows longer
    than one chunk, allocated with x's library; None where the library can
    allocate it itself (torch lends it its allocator through the DLPack
    exchange API) or no buffer is needed."""
    if type(x) is _ndarray or _cuda_device(x) is None:
        return None
    if _is_torch_tensor(x) and hasattr(type(x), "__dlpack_c_exchange_api__"):
        return None
    numel = math.prod(shape)
    cols = numel if axis is None or len(shape) == 0 else shape[-1]
    if cols <= _CUDA_CHUNK:
        return None
    rows_ = numel // cols
    return _new_array("scratch", x, (rows_ * -(-cols // _CUDA_CHUNK),), _library_dtype("scratch", x, "float64"))


# Mirrors kReduceCudaChunk (src/core/args.h): on CUDA, rows longer than this
# are reduced in chunks whose partials go to a float64 scratch array; the
# library checks the size it is given.
_CUDA_CHUNK = 8192


def lead_name(op: Op) -> str:
    """The argument whose library and device the result follows: the first
    array written by an in-place op, else the first array."""
    return op.written[0] if op.in_place else op.arrays[0].name


def call_checked(op: Op, out, values: tuple):
    """The slow path of ``hetkern.<op>``: every argument checked (see
    `_check_arg`), the result allocated with the caller's library, arrays of
    other libraries on CUDA run on their current stream."""
    names = [a.name for a in op.args]
    checked = {a.name: _check_arg(op, a, v) for a, v in zip(op.args, values)}
    lead = values[names.index(lead_name(op))]
    if not op.in_place:
        if out is None:
            dtype = None if op.dtype_arg is None else _library_dtype(op.name, lead, checked[op.dtype_arg])
            out = _new_array(op.name, lead, result_shape(op, lead.shape, checked), dtype)
        else:
            if type(out) is _ndarray and not out.flags.writeable:
                raise ValueError(f"hetkern.{op.name}: 'out' is read-only; expected a writable array")
            _check_array(op.name, "out", out)
            if op.dtype_arg is not None:
                want = checked[op.dtype_arg]
                have = _dtype_label(out)
                if have != want:
                    raise ValueError(f"hetkern.{op.name}: 'out' has dtype {have}; expected {want} "
                                     f"(the '{op.dtype_arg}' argument)")
        checked["out"] = out
    if "scratch" in op.export:
        checked["scratch"] = _scratch(lead, tuple(lead.shape), checked.get("axis"))
    args = [checked[n] for n in op.export]
    device = None if type(lead) is _ndarray or _is_torch_tensor(lead) else _cuda_device(lead)
    if device is None:
        _EXPORTS[op.name](*args)
    else:
        stream = _current_stream(lead, device)
        args = [_OnStream(a, stream) if _cuda_device(a) is not None and not _is_torch_tensor(a) else a
                for a in args]
        with tvm_ffi.use_raw_stream(tvm_ffi.device("cuda", device), stream):
            _EXPORTS[op.name](*args)
    if op.in_place:
        written = tuple(values[names.index(n)] for n in op.written)
        return written[0] if len(written) == 1 else written  # as the fast path
    return out


def _dtype_label(a) -> str:
    dtype = a.dtype
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        return str(dtype).removeprefix("torch.")
    return getattr(dtype, "name", str(dtype))


# ---- the generated functions ---------------------------------------------------
# One namespace for all of them: `_Tensor` and `_torch_empty_like` are set
# once torch is loaded (`use_torch`), and every function sees the change.
_NS: dict = {
    "_ndarray": _ndarray,
    "_np_empty_like": np.empty_like,
    "_np_empty": np.empty,
    "_Tensor": _NeverAnArray,
    "_torch_empty_like": None,
}
_EXPORTS: dict = {}
# Dtype objects the fast path of a dtype argument knows (names, NumPy dtypes
# and scalar types; torch dtypes once torch is loaded) -> hetkern dtype name.
_NP_DTYPES = {n: np.dtype(n) for n in DTYPE_NAMES if n != "bfloat16"}
_NS["_NP_DTYPES"] = _NP_DTYPES
_NS["_TORCH_DTYPES"] = {}
_NS["_DTYPE_NAME_OF"] = {
    **{n: n for n in DTYPE_NAMES},
    **{d: n for n, d in _NP_DTYPES.items()},
    **{d.type: n for n, d in _NP_DTYPES.items()},
}


def _signature(op: Op) -> str:
    parts = [a.name if a.default is REQUIRED else f"{a.name}={a.default!r}" for a in op.args]
    if not op.in_place:
        parts.append("out=None")
    return ", ".join(parts)


def _source(op: Op) -> str:
    """The source of ``hetkern.<op>``: the fast path for NumPy arrays and
    torch tensors, everything else through `call_checked`."""
    name, lead = op.name, lead_name(op)
    values = ", ".join(a.name for a in op.args)
    slow = f"return _slow_{name}({'None' if op.in_place else 'out'}, ({values},))"
    if op.dtype_arg is not None:
        return _dtype_source(op, slow)
    export = ", ".join("None" if n == "scratch" else n for n in op.export)
    done = f"return {', '.join(op.written)}" if op.in_place else "return out"
    guards = [f"(type({a.name}) is int or {a.name} is None)" for a in op.args if a.kind == AXIS]
    native = f"type({lead}) is _ndarray or type({lead}) is _Tensor"
    lines = [f"def {name}({_signature(op)}):"]
    indent = "    "
    if op.in_place:
        lines.append(f"    if {' and '.join([f'({native})'] + guards)}:")
        indent = "        "
    elif op.shape.__name__ == "like":
        lines += [
            "    if out is None:",
            f"        if type({lead}) is _ndarray:",
            f"            out = _np_empty_like({lead})",
            f"        elif type({lead}) is _Tensor:",
            f"            out = _torch_empty_like({lead})",
            "        else:",
            f"            {slow}",
            f"    elif type({lead}) is not _ndarray and type({lead}) is not _Tensor:",
            f"        {slow}",
        ]
    else:
        lines += [
            f"    if not ({' and '.join([f'({native})'] + guards)}):",
            f"        {slow}",
            "    if out is None:",
            f"        _shape = {_shape_expression(op, lead)}",
            f"        if type({lead}) is _ndarray:",
            f"            out = _np_empty(_shape, {lead}.dtype)",
            "        else:",
            "            # torch parses separate ints ~1 us faster than a tuple (docs/performance.md)",
            f"            out = {lead}.new_empty(*_shape) if _shape else {lead}.new_empty(())",
        ]
    lines += [
        f"{indent}try:",
        f"{indent}    _fn_{name}({export})",
        f"{indent}    {done}",
        f"{indent}except (TypeError, BufferError):",
        f"{indent}    pass",
        f"    {slow}",
    ]
    return "\n".join(lines) + "\n"


def _dtype_source(op: Op, slow: str) -> str:
    """The fast path of an op whose result dtype is an argument (cast): a
    known dtype object, NumPy arrays or torch tensors at both ends, `out`
    (when given) of that dtype; the result shape is the lead's."""
    name, lead, dtype = op.name, lead_name(op), op.dtype_arg
    export = ", ".join(op.export)
    return "\n".join([
        f"def {name}({_signature(op)}):",
        "    try:",
        f"        _name = _DTYPE_NAME_OF[{dtype}]",
        "    except (KeyError, TypeError):  # unknown, or unhashable: the checked path says why",
        f"        {slow}",
        f"    if type({lead}) is _ndarray and _name in _NP_DTYPES:",
        "        if out is None:",
        f"            out = _np_empty({lead}.shape, _NP_DTYPES[_name])",
        "        elif type(out) is not _ndarray or _DTYPE_NAME_OF.get(out.dtype) != _name:",
        f"            {slow}",
        f"    elif type({lead}) is _Tensor:",
        "        if out is None:",
        f"            out = _torch_empty_like({lead}, dtype=_TORCH_DTYPES[_name])",
        "        elif type(out) is not _Tensor or out.dtype is not _TORCH_DTYPES[_name]:",
        f"            {slow}",
        "    else:",
        f"        {slow}",
        "    try:",
        f"        _fn_{name}({export})",
        "        return out",
        "    except (TypeError, BufferError):",
        "        pass",
        f"    {slow}",
    ]) + "\n"


def _shape_expression(op: Op, lead: str) -> str:
    """The result shape of a NumPy/torch `lead` as an expression: inline for
    the registry's own rules (a call less), a call of the rule otherwise."""
    if op.shape is reduced:
        return f"() if axis is None else {lead}.shape[:-1]"
    params = ", ".join(f"{a.name}={a.name}" for a in op.args if not a.is_array)
    return f"_shape_{op.name}({lead}.shape, {params})"


def make_function(op: Op):
    """``hetkern.<op>`` for one registry entry."""
    _EXPORTS[op.name] = getattr(_lib.module, op.name)
    _NS[f"_fn_{op.name}"] = _EXPORTS[op.name]
    _NS[f"_slow_{op.name}"] = lambda out, values, op=op: call_checked(op, out, values)
    if op.shape is not None:
        _NS[f"_shape_{op.name}"] = op.shape
    source = _source(op)
    filename = f"<hetkern generated: {op.name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), _NS)  # noqa: S102 (our own registry, not input)
    fn = _NS[op.name]
    fn.__module__ = "hetkern"
    fn.__qualname__ = op.name
    fn.__doc__ = op.doc
    return fn


def use_torch(torch) -> None:
    """Let torch tensors take the fast path: only where TVM-FFI converts them
    through torch's DLPack C exchange API (which also lends the library
    torch's current stream and allocator); otherwise they stay on the checked path."""
    if hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        _NS["_Tensor"] = torch.Tensor
        _NS["_torch_empty_like"] = torch.empty_like
        _NS["_TORCH_DTYPES"].update({n: getattr(torch, n) for n in DTYPE_NAMES})
        _NS["_DTYPE_NAME_OF"].update({getattr(torch, n): n for n in DTYPE_NAMES})


FUNCTIONS: dict = {op.name: make_function(op) for op in OPS}
if "torch" in sys.modules:
    use_torch(sys.modules["torch"])
