"""The op registry: every op of hetkern declared once.

An entry says what the op is called, its arguments in the Python API's order
and what kind each one is, which arrays it writes, how its result's shape and
dtype follow from the inputs, how the library's export takes the arguments,
and its docstring. Everything framework-facing is generated from it:

- the public functions ``hetkern.<op>`` (`_ops.make_function`),
- the torch custom ops ``torch.ops.hetkern.<op>``: schemas, CPU and CUDA
  kernels, fake kernels, autograd refusal (`_torch`),
- the JAX functions ``hetkern.jax.<op>`` (`jax`),
- the op-table and typed-error tests (tests/test_registry.py).

Adding an op means: its kernels and export (src/), one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

# ---- argument kinds ----------------------------------------------------------
ARRAY = "array"                    # an array (NumPy, torch, any DLPack producer)
OPTIONAL_ARRAY = "optional array"  # an array or None
ARRAY_OR_NUMBER = "array or number"
NUMBER = "number"                  # a real number, passed as float
INT = "int"
BOOL = "bool"
STR = "str"
DTYPE = "dtype"                    # torch.dtype, NumPy dtype or a dtype name
AXIS = "axis"                      # int, or None for the whole array

ARRAY_KINDS = (ARRAY, OPTIONAL_ARRAY, ARRAY_OR_NUMBER)

REQUIRED = object()  # default of an argument without one


@dataclass(frozen=True)
class Arg:
    name: str
    kind: str
    default: object = REQUIRED
    # In-place ops: the op writes this array (the torch schema marks it `!`).
    writes: bool = False

    @property
    def is_array(self) -> bool:
        return self.kind in ARRAY_KINDS


# ---- how the result's shape follows from the first array's shape -------------
def like(shape, **_):
    return tuple(shape)


def reduced(shape, axis=-1, **_):
    """sum/max/dot/norm: per row, or a 0-d result for the whole array."""
    return () if axis is None else tuple(shape)[:-1]


def gated(shape, **_):
    """(..., 2d) -> (..., d); an odd or missing last dimension is the library's
    ValueError, the shape here just has to be harmless until then."""
    shape = tuple(shape)
    if not shape or shape[-1] % 2:
        return (0,)
    return shape[:-1] + (shape[-1] // 2,)


@dataclass(frozen=True)
class Op:
    name: str
    family: str
    args: tuple
    doc: str
    # The library export's arguments in order: names of `args`, plus "out"
    # (the result array; in-place ops may instead have an argument "out"
    # that they write, as the quant norms take FlashInfer's `out`) and "scratch" (reductions' CUDA partials, None
    # unless the caller's library cannot lend the library its allocator).
    export: tuple
    # Shape of the result from the first array's shape and the other
    # arguments (keywords); None for in-place ops, which return the arrays
    # they write (those with `writes`).
    shape: object = like
    # Name of the argument holding the result's dtype; None: the first array's.
    dtype_arg: str | None = None
    # Batching (JAX vmap): leading dimensions of these arguments are free
    # (the op is row- or element-wise over them); other batched arguments
    # are mapped one at a time.
    batch_args: tuple = ("x",)
    # Ops whose row-strided views (last dimension contiguous) the library
    # accepts; nothing in Python may copy or refuse them.
    row_strided: bool = False

    @property
    def in_place(self) -> bool:
        return self.shape is None

    @property
    def written(self) -> tuple:
        return tuple(a.name for a in self.args if a.writes)

    @property
    def arrays(self) -> tuple:
        return tuple(a for a in self.args if a.is_array)

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)


def _x(name="x", writes=False):
    return Arg(name, ARRAY, writes=writes)


_BINARY_DOC = """Return ``x {sym} y`` elementwise, computed on the device ``x`` lives on.

    ``y`` is an array of ``x``'s dtype and device with ``x``'s shape, a trailing
    part of it (``(D,)`` for an ``(N, D)`` ``x``), shape ``(1,)`` or ``()``; or a
    real number, rounded to the compute type first. No type promotion: the
    result has ``x``'s shape and dtype. float16/bfloat16 are computed in float32
    and rounded once, so results equal torch's ``x {sym} y`` bit for bit.
    ``out`` may be ``x`` (or ``y`` when it has ``x``'s shape).{extra}
    """

_DIV_EXTRA = """

    Division is IEEE division on both devices (torch's CUDA kernel multiplies by
    the reciprocal of a Python-number divisor instead; hetkern does not)."""


def _binary(name, sym, extra=""):
    return Op(name, "elementwise", (_x(), Arg("y", ARRAY_OR_NUMBER)),
              _BINARY_DOC.format(sym=sym, extra=extra), ("out", "x", "y"), batch_args=("x", "y"))


def _unary(name, family, doc, row_strided=False):
    return Op(name, family, (_x(),), doc, ("out", "x"), row_strided=row_strided)


def _reduction(name, doc, with_y=False):
    args = (_x(),) + ((_x("y"),) if with_y else ()) + (Arg("axis", AXIS, -1),)
    names = tuple(a.name for a in args)
    return Op(name, "reduce", args, doc, ("out",) + names + ("scratch",), shape=reduced,
              batch_args=("x", "y") if with_y else ("x",))


def _gated_op(name, doc, approximate=False):
    args = (_x(),) + ((Arg("approximate", STR, "none"),) if approximate else ())
    return Op(name, "activation", args, doc, ("out",) + tuple(a.name for a in args), shape=gated,
              row_strided=True)


_QUANT_DOC = """

    ``out``: x's shape and device, dtype ``float8_e4m3fn`` (torch, JAX) or
    ``uint8`` holding its bits (NumPy has no fp8 dtype: pass
    ``np.empty(x.shape, np.uint8)``, or an ``ml_dtypes.float8_e4m3fn`` array,
    which is written through a uint8 view). It may be a row-strided view and
    must not overlap any input. ``scale``: a float32 array of one element on
    x's device. The e4m3 rounding is torch's ``.to(torch.float8_e4m3fn)``
    (nearest even), bit for bit; NaN stays NaN. Returns ``out`` (docs/norm.md).
    """


def _norm_quant(name, args, doc, batch_args=("out", "x")):
    """An fp8-quantising norm: FlashInfer's argument order, `out` first and written."""
    args = (_x("out", writes=True),) + args
    return Op(name, "norm", args, doc + _QUANT_DOC, tuple(a.name for a in args), shape=None,
              batch_args=batch_args, row_strided=True)


OPS: tuple = (
    # ---- elementwise (docs/elementwise.md) ----
    Op("scale", "elementwise", (_x(), Arg("factor", NUMBER)),
       """Return ``x * factor``, computed on the device ``x`` lives on.

    float16/bfloat16 are computed in float32 and rounded to nearest even, so
    results equal torch's ``x * factor`` bit for bit. ``out`` may be ``x``.
    """, ("out", "x", "factor")),
    _binary("add", "+"),
    _binary("sub", "-"),
    _binary("mul", "*"),
    _binary("div", "/", _DIV_EXTRA),
    Op("axpby", "elementwise", (_x(), _x("y"), Arg("a", NUMBER), Arg("b", NUMBER)),
       """Return ``a*x + b*y`` elementwise, computed on the device ``x`` lives on.

    ``y`` as for :func:`add` (an array). Computed in the compute type as
    ``round(round(a*x) + round(b*y))`` without FMA: bit-equal to torch's
    ``a*x + b*y`` for float32/float64; for float16/bfloat16 the result is
    rounded once from float32 (torch rounds each intermediate to 16 bits).
    """, ("out", "x", "y", "a", "b"), batch_args=("x", "y")),
    Op("cast", "elementwise", (_x(), Arg("dtype", DTYPE)),
       """Return ``x`` converted to ``dtype`` (float32, float64, float16, bfloat16).

    ``dtype`` is a torch.dtype, a NumPy dtype/type or a name such as
    ``"bfloat16"``. Rounds to nearest even, bit-equal to torch's
    ``x.to(dtype)``; float64 -> float16/bfloat16 rounds through float32
    exactly as torch does (NumPy's ``astype`` rounds once, so it can differ in
    the last bit). The identity cast copies every bit. A new array is always
    returned unless ``out`` is given (``out=x`` is allowed for the identity).
    """, ("out", "x"), dtype_arg="dtype"),
    # ---- activations (docs/activation.md) ----
    _unary("relu", "activation",
           """``max(x, 0)``, bit-exact to torch.relu (relu(NaN) = NaN, relu(-0) = -0)."""),
    _unary("sigmoid", "activation", """``1 / (1 + exp(-x))``, accurate also where it is tiny (x < -88)."""),
    _unary("silu", "activation", """``x * sigmoid(x)`` (SiLU / swish), as torch.nn.functional.silu."""),
    Op("gelu", "activation", (_x(), Arg("approximate", STR, "none")),
       """GELU as torch.nn.functional.gelu: ``x * Phi(x)`` for approximate='none'
    (the erf form), ``x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` for 'tanh'.""",
       ("out", "x", "approximate")),
    _unary("tanh", "activation", """Hyperbolic tangent, as torch.tanh."""),
    _unary("exp", "activation",
           """``e ** x``, as torch.exp (overflows to inf, underflows through subnormals to 0)."""),
    _gated_op("silu_and_mul", """``silu(x[..., :d]) * x[..., d:]`` for x of shape (..., 2d), computed in
    float32 (float64 for float64) and rounded once, as vLLM's kernel.
    ``out`` has shape (..., d) and must not overlap ``x``."""),
    _gated_op("gelu_and_mul", """``gelu(x[..., :d], approximate) * x[..., d:]`` for x of shape (..., 2d),
    computed in float32 (float64 for float64) and rounded once.""", approximate=True),
    # ---- reductions (docs/reduce.md) ----
    _reduction("sum", """Sum over the last axis (``axis=-1``) or the whole array (``axis=None``).

    The result has x's dtype; float16/bfloat16 accumulate in float32. Empty
    rows sum to 0. The summation order is fixed (docs/reduce.md), so results
    do not depend on the thread count or the CPU's SIMD target.
    """),
    _reduction("max", """Largest element over the last axis or the whole array; NaN if any
    element is NaN (like ``torch.amax``). ValueError for empty rows."""),
    _reduction("dot", """``(x * y).sum(axis)``; y has x's shape, dtype and device.""", with_y=True),
    _reduction("norm", """L2 norm ``sqrt(sum(x * x))`` over the last axis or the whole array.

    Squares are accumulated in float64 for every dtype, so float32 input
    neither overflows nor underflows in the squares.
    """),
    # ---- normalisation (docs/norm.md) ----
    Op("rmsnorm", "norm", (_x(), _x("weight"), Arg("eps", NUMBER, 1e-6)),
       """Return ``x / sqrt(mean(x**2, -1) + eps) * weight`` over the last dimension.

    Semantics of vLLM's ``rms_norm``: the mean of squares is accumulated in
    float32 (float64 for float64 input) and the normalised value is rounded
    to x's dtype before the multiply by ``weight`` (shape ``(H,)``, x's
    dtype, or float32 for float16/bfloat16 x). ``out`` may be ``x``.
    """, ("out", "x", "weight", "eps"), row_strided=True),
    Op("gemma_rmsnorm", "norm", (_x(), _x("weight"), Arg("eps", NUMBER, 1e-6)),
       """Return ``x / sqrt(mean(x**2, -1) + eps) * (1 + weight)`` over the last
    dimension, as Gemma's RMSNorm (vLLM's ``GemmaRMSNorm``, FlashInfer's
    ``gemma_rmsnorm``).

    Computed in float32 (float64 for float64 input), ``1 + weight`` included,
    and rounded to x's dtype once, after the weight multiply. ``weight`` has
    shape ``(H,)`` and x's dtype, or float32 for float16/bfloat16 x. ``out``
    may be ``x``.
    """, ("out", "x", "weight", "eps"), row_strided=True),
    Op("fused_add_rmsnorm", "norm",
       (_x(writes=True), _x("residual", writes=True), _x("weight"), Arg("eps", NUMBER, 1e-6)),
       """In place, as vLLM's ``fused_add_rms_norm``: ``residual = x + residual``
    (rounded to the dtype), then ``x = rmsnorm(residual, weight, eps)``.

    ``x`` and ``residual`` have the same shape, dtype and device and must not
    overlap. Returns ``(x, residual)``, the objects passed in.
    """, ("x", "residual", "weight", "eps"), shape=None, batch_args=("x", "residual"),
       row_strided=True),
    Op("gemma_fused_add_rmsnorm", "norm",
       (_x(writes=True), _x("residual", writes=True), _x("weight"), Arg("eps", NUMBER, 1e-6)),
       """In place, as vLLM's ``GemmaRMSNorm`` with a residual: ``residual = x +
    residual`` (rounded to the dtype), then ``x = gemma_rmsnorm(residual,
    weight, eps)``.

    Rules of :func:`fused_add_rmsnorm`. Returns ``(x, residual)``, the
    objects passed in.
    """, ("x", "residual", "weight", "eps"), shape=None, batch_args=("x", "residual"),
       row_strided=True),
    Op("layernorm", "norm", (_x(), _x("weight"), Arg("bias", OPTIONAL_ARRAY, None), Arg("eps", NUMBER, 1e-5)),
       """Return ``(x - mean) / sqrt(var + eps) * weight + bias`` over the last
    dimension, like ``torch.nn.functional.layer_norm(x, (H,), weight, bias, eps)``.

    Mean and (biased) variance are computed in two passes in float32 (float64
    for float64 input); ``bias`` may be None. ``weight`` and ``bias`` have
    x's dtype, or both float32 for float16/bfloat16 x. ``out`` may be ``x``.
    """, ("out", "x", "weight", "bias", "eps"), row_strided=True),
    _norm_quant("rmsnorm_quant", (_x(), _x("weight"), _x("scale"), Arg("eps", NUMBER, 1e-6)),
                """FlashInfer's ``rmsnorm_quant(out, x, weight, scale, eps)``: writes
    ``out = e4m3(clamp(y / scale, -448, 448))`` with ``y = x / sqrt(mean(x**2, -1) + eps) * weight``
    computed in float32 (float64 for float64 x) and not rounded to x's dtype."""),
    _norm_quant("fused_add_rmsnorm_quant",
                (_x(), _x("residual", writes=True), _x("weight"), _x("scale"), Arg("eps", NUMBER, 1e-6)),
                """FlashInfer's ``fused_add_rmsnorm_quant(out, x, residual, weight, scale, eps)``:
    ``residual = x + residual`` in place (rounded to the dtype), and ``out`` the
    e4m3 quantisation of the rmsnorm of the unrounded sum. ``x`` is only read.
    Returns ``(out, residual)``.""", batch_args=("out", "x", "residual")),
    _norm_quant("layernorm_quant",
                (_x(), _x("weight"), _x("scale"), Arg("bias", OPTIONAL_ARRAY, None), Arg("eps", NUMBER, 1e-5)),
                """``out = e4m3(clamp(y / scale, -448, 448))`` with ``y`` the layernorm of
    :func:`layernorm` (``bias`` may be None) in float32, not rounded to x's dtype."""),
    # ---- softmax (docs/softmax.md) ----
    _unary("softmax", "softmax", """Return ``softmax(x)`` over the last dimension, on the device ``x`` lives on.

    Like ``torch.softmax(x, -1)``: ``exp(x - max) / sum(exp(x - max))`` per
    row, computed in float32 (float64 for float64 input) and rounded once to
    x's dtype. A row holding NaN or +inf, or only -inf, gives NaN; -inf
    entries of other rows get probability 0. ``out`` may be ``x`` (in place).
    """, row_strided=True),
    _unary("log_softmax", "softmax", """Return ``log_softmax(x)`` = ``x - max - log(sum(exp(x - max)))`` over the
    last dimension, on the device ``x`` lives on.

    Like ``torch.log_softmax(x, -1)``; same precision, special values and
    ``out`` rules as :func:`softmax` (-inf entries stay -inf).
    """, row_strided=True),
    # ---- rotary embedding (docs/rope.md) ----
    Op("rope", "rope",
       (_x("positions"), _x("query", writes=True), Arg("key", OPTIONAL_ARRAY, writes=True),
        Arg("head_size", INT), _x("cos_sin_cache"), Arg("is_neox", BOOL, True)),
       """Apply rotary position embedding to ``query`` and ``key`` in place and
    return ``(query, key)``, as vLLM's ``rotary_embedding`` op does.

    - ``positions``: int64 or int32, shape ``(num_tokens,)`` or ``(batch, seq)``;
      each value is a row of ``cos_sin_cache``.
    - ``query``: shape ``(*positions.shape, num_heads * head_size)`` or
      ``(*positions.shape, num_heads, head_size)``; float32, float64, float16
      or bfloat16. ``key``: the same with its own head count, or None.
    - ``cos_sin_cache``: ``(max_position, rot_dim)``, cos in the first
      ``rot_dim // 2`` columns and sin in the rest; the dtype of ``query`` or
      float32. ``rot_dim`` is even and ``<= head_size``: only the first
      ``rot_dim`` features of each head rotate.
    - ``is_neox``: True rotates pairs ``(i, i + rot_dim // 2)`` (GPT-NeoX),
      False pairs ``(2i, 2i + 1)`` (GPT-J).

    float16/bfloat16 are computed in float32 and rounded once. On CPU a
    position outside ``[0, max_position)`` raises ValueError before anything
    is written; on CUDA (checking would need a host sync) such tokens are left
    unchanged. The rows of ``query`` and ``key`` may be strided views (last
    dimension contiguous), as vLLM's ``qkv.split``.
    """, ("query", "key", "positions", "cos_sin_cache", "head_size", "is_neox"), shape=None,
       batch_args=("positions", "query", "key"), row_strided=True),
)

BY_NAME: dict = {op.name: op for op in OPS}

# Ops whose arguments of kind DTYPE accept these names.
DTYPE_NAMES = ("float32", "float64", "float16", "bfloat16")


def result_shape(op: Op, shape, values: dict) -> tuple:
    """The result's shape for an op whose first array has `shape`."""
    return op.shape(shape, **{a.name: values.get(a.name) for a in op.args if not a.is_array})


__all__ = ["ARRAY", "ARRAY_KINDS", "ARRAY_OR_NUMBER", "AXIS", "Arg", "BOOL", "BY_NAME", "DTYPE",
           "DTYPE_NAMES", "INT", "NUMBER", "OPS", "OPTIONAL_ARRAY", "Op", "REQUIRED", "STR",
           "result_shape"]
