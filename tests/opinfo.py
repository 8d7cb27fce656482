"""The op table that drives test_opinfo.py (in the spirit of PyTorch's OpInfo).

Each OpInfo says how to build inputs of a given shape, how to call hetkern and
the reference, which dtypes it supports and how exact it is. test_opinfo.py
generates every op x dtype x device x CPU target x sample from it; adding an
op means adding one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F

import hetkern

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
ALL_FLOATS = (F32, F64, F16, BF16)

# Shapes around SIMD widths (4..16 lanes) and CUDA block sizes, 0-d and empty.
ELEMENTWISE_SHAPES = [(), (0,), (1,), (3,), (7,), (16,), (17,), (33,), (63,), (65,), (255,),
                      (257,), (1023,), (1025,), (4097,), (3, 0, 2), (5, 7), (2, 3, 5), (65536 + 3,)]
# Row ops reduce or normalise over the last dimension.
ROW_SHAPES = [(0, 8), (1, 1), (3, 1), (5, 7), (4, 33), (2, 64), (3, 127), (2, 1025), (2, 3, 17),
              (1, 65536 + 7), (7, 4097)]


@dataclass
class Tolerance:
    """|actual - expected| <= atol + rtol * |expected|, per dtype; None: bit-exact."""

    atol: float = 0.0
    rtol: float = 0.0


@dataclass
class OpInfo:
    name: str
    # (shape, dtype, device, generator) -> list of input tensors
    make_inputs: Callable
    # (inputs, out) -> result; `out` is None or a preallocated tensor
    call: Callable
    # inputs -> expected result (tensor in the output dtype)
    reference: Callable
    shapes: list = field(default_factory=lambda: ELEMENTWISE_SHAPES)
    dtypes: tuple = ALL_FLOATS
    # dtype -> Tolerance, or None for bit-exact (NaN-aware) comparison
    tolerance: Callable = lambda dtype: None
    # (inputs, **variant) -> an output array (None: like inputs[0])
    out_like: Callable | None = None
    # Whether out=inputs[0] (in place) is supported.
    inplace: bool = True
    # Extra positional/keyword variants to test, e.g. approximate="tanh".
    variants: tuple = ({},)
    # A shape for test_non_contiguous_input_is_refused (inputs[0] is transposed).
    layout_shape: tuple = (6, 10)
    # Whether test_properties may feed arbitrary floats (NaN, inf, ...) and
    # expect the reference's answer (False where inputs must be well-formed).
    property_values: bool = True

    def expected_out(self, inputs, **variant):
        if self.out_like:
            return self.out_like(inputs, **variant)
        return torch.empty_like(inputs[0], memory_format=torch.contiguous_format)


def randn(shape, dtype, device, gen, scale_exp=8):
    """Values spread over several binades, in float64 first so that every
    dtype sees the same numbers (rounded once)."""
    base = torch.randn(shape, generator=gen, dtype=torch.float64)
    base *= torch.exp2(torch.randint(-scale_exp, scale_exp, shape, generator=gen).double())
    return base.to(dtype).to(device)


def storage_tolerance(ulps_16bit=2.0, f32=1e-5, f64=1e-12):
    """A Tolerance per dtype: a few units of the storage type's last place for
    16-bit types (results computed in float32 and rounded once, compared with
    a float64 reference rounded once), small relative errors otherwise."""
    table = {F16: Tolerance(atol=ulps_16bit * 2**-24, rtol=ulps_16bit * 2**-10),
             BF16: Tolerance(atol=ulps_16bit * 2**-133, rtol=ulps_16bit * 2**-7),
             F32: Tolerance(atol=f32 * 0.1, rtol=f32), F64: Tolerance(atol=f64 * 0.1, rtol=f64)}
    return table.__getitem__


def sum_tolerance(dtype):
    """Sums of n ~ 4K..64K terms of magnitude ~1 near zero after cancellation:
    an absolute term of a few eps(accumulator) * sum|x| (docs/reduce.md has the
    exact bound; test_reduce.py checks it), relative: the output rounding."""
    if dtype == F64:
        return Tolerance(atol=1e-9, rtol=1e-12)
    return Tolerance(atol=2e-3, rtol={F32: 1e-5, F16: 2 * 2**-10, BF16: 2 * 2**-7}[dtype])


def activation_tolerance(f32_ulps=16, f64=1e-10):
    """Transcendental activations vs a float64 reference: a few ulp in float32
    (CUDA's libdevice included; docs/activation.md has the per-op bounds that
    test_activation.py enforces), 1-2 ulp of the storage type for 16-bit, and
    an absolute term for results in the subnormal range."""
    table = {F32: Tolerance(atol=1e-37, rtol=f32_ulps * 2**-24),
             F64: Tolerance(atol=1e-300, rtol=f64),
             F16: Tolerance(atol=2**-24, rtol=2 * 2**-11),
             BF16: Tolerance(atol=1e-37, rtol=2 * 2**-8)}
    return table.__getitem__


def gelu_reference(x, approximate="none"):
    """GELU in float64 without the cancellation of 0.5 * x * (1 + erf/tanh)
    for negative x (torch's formula loses the tail that hetkern keeps)."""
    if approximate == "tanh":
        k0, k1 = (2 / torch.pi) ** 0.5, 0.044715
        return x * torch.sigmoid(2 * k0 * (x + k1 * x**3))
    return x * 0.5 * torch.special.erfc(-x / 2**0.5)


def pairs(make):
    """make_inputs for two same-shaped operands."""
    return lambda shape, dtype, device, gen: [make(shape, dtype, device, gen),
                                              make(shape, dtype, device, gen)]


def gated_inputs(shape, dtype, device, gen):
    return [randn(shape[:-1] + (2 * shape[-1],), dtype, device, gen, 2)]


def gated_out(inputs, **variant):
    x = inputs[0]
    return torch.empty(x.shape[:-1] + (x.shape[-1] // 2,), dtype=x.dtype, device=x.device)


def gated_reference(act):
    def reference(inputs, **kw):
        x = inputs[0].double()
        d = x.shape[-1] // 2
        return (act(x[..., :d], **kw) * x[..., d:]).to(inputs[0].dtype)
    return reference


def rope_inputs(shape, dtype, device, gen):
    """shape = (tokens, query heads, head_size); 2 kv heads, full rotary."""
    tokens, heads, head_size = shape
    max_position = 64
    positions = torch.randint(0, max_position, (tokens,), generator=gen).to(device)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_size, 2, dtype=torch.float64) / head_size))
    freqs = torch.outer(torch.arange(max_position, dtype=torch.float64), inv_freq)
    cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(dtype).to(device)
    return [randn((tokens, heads * head_size), dtype, device, gen, 2),
            randn((tokens, 2 * head_size), dtype, device, gen, 2), positions, cache]


def rope_reference(inputs, is_neox=True):
    """vLLM's forward_native in the compute type, rounded once."""
    query, key, positions, cache = inputs
    compute = torch.float64 if query.dtype == F64 else torch.float32
    cos, sin = cache.to(compute)[positions.long()].chunk(2, dim=-1)
    cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)
    head_size = cache.shape[1]

    def apply(x):
        x = x.to(compute).reshape(x.shape[0], x.shape[1] // head_size, head_size)
        if is_neox:
            x1, x2 = x.chunk(2, dim=-1)
        else:
            x1, x2 = x[..., ::2], x[..., 1::2]
        o1, o2 = x1 * cos - x2 * sin, x2 * cos + x1 * sin
        y = torch.cat((o1, o2), -1) if is_neox else torch.stack((o1, o2), -1).flatten(-2)
        return y.flatten(-2).to(query.dtype)

    return apply(query), apply(key)


def ieee_amax(x, axis=-1):
    """torch.amax over the last axis (or all, axis=None) with the sign of a
    zero maximum made order-independent: +0 if the row holds a +0 (IEEE
    754-2019 maximum, hetkern.max's contract). torch.amax itself returns the
    zero its evaluation order meets first: -0.0 for [-0., 0.], +0.0 for [0., -0.]."""
    flat = x.reshape(-1) if axis is None else x
    dim = 0 if axis is None else -1
    ref = torch.amax(flat, dim=dim)
    has_positive_zero = ((flat == 0) & ~torch.signbit(flat)).any(dim=dim)
    return torch.where((ref == 0) & has_positive_zero, ref.abs(), ref)


def rows_out(inputs, **variant):
    x = inputs[0]
    return torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)


def weights(shape, dtype, device, gen):
    return randn(shape[-1:], dtype, device, gen, scale_exp=1)


def rms_reference(x, w, eps):
    """vLLM's rms_norm: normalise in float64 here, round to the storage type,
    multiply by the weight, round again."""
    x64 = x.double()
    normed = (x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)
    return (normed.double() * w.double()).to(x.dtype)


def gemma_rms_reference(x, w, eps):
    """vLLM's GemmaRMSNorm: normalise in float64 here, multiply by 1 + w
    (computed in x's compute type, as vLLM's 1.0 + weight.float()), round once."""
    x64 = x.double()
    scale = 1 + w.to(torch.float64 if x.dtype == F64 else torch.float32)
    return (x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps) * scale.double()).to(x.dtype)


# ---- fp8-quantising norms (docs/norm.md): out = e4m3(clamp(y / scale)) ----
FP8 = torch.float8_e4m3fn
# Not a power of two, so that y / scale rounds; y up to ~8 then saturates.
QUANT_SCALE = 0.0173


def quantize_e4m3(v: torch.Tensor) -> torch.Tensor:
    """torch's e4m3fn of clamp(v): float64 through float32, as the library does."""
    return v.clamp(-448, 448).float().to(FP8)


def rms_quant_reference(x, w, scale, eps, residual=None):
    """FlashInfer's rmsnorm_quant in float64: y = v * rsqrt(mean(v^2) + eps) * w,
    v = x (+ residual), nothing rounded before the quantisation."""
    v = x.double() if residual is None else x.double() + residual.double()
    y = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps) * w.double()
    return quantize_e4m3(y / scale.double())


def layernorm_quant_reference(x, w, b, scale, eps):
    y = torch.nn.functional.layer_norm(x.double(), x.shape[-1:], w.double(),
                                       None if b is None else b.double(), eps)
    return quantize_e4m3(y / scale.double())


def quant_inputs(*arrays):
    """make_inputs of a quant norm: the arrays named ('x', 'w', ...) and scale last."""
    def make(shape, dtype, device, gen):
        made = [weights(shape, dtype, device, gen) if a in ("w", "b") else randn(shape, dtype, device, gen, 2)
                for a in arrays]
        return made + [torch.tensor([QUANT_SCALE], device=device)]
    return make


def quant_out(inputs, **_):
    return torch.empty(inputs[0].shape, dtype=FP8, device=inputs[0].device)


def _quant_call(fn, inputs, out, *rest):
    out = quant_out(inputs) if out is None else out
    return fn(out, *inputs, *rest)


# Within one e4m3 step of the float64 reference: y in float32 differs from it
# by a few ulps, which moves the rounding where y / scale lies at an e4m3
# midpoint. test_norm_quant.py checks the bits exactly away from midpoints.
def quant_tolerance(dtype):
    return Tolerance(atol=2.0**-9, rtol=2.0**-3)


OPS: list[OpInfo] = [
    OpInfo(
        name="scale",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.scale(inputs[0], -0.37, out=out),
        reference=lambda inputs, **kw: inputs[0] * -0.37,
    ),
    # ---- reductions over the last dimension (docs/reduce.md) ----
    OpInfo(
        name="sum",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 1)],
        call=lambda inputs, out, **kw: hetkern.sum(inputs[0], out=out),
        reference=lambda inputs, **kw: inputs[0].double().sum(-1).to(inputs[0].dtype),
        shapes=ROW_SHAPES, out_like=rows_out, inplace=False, property_values=False,
        tolerance=sum_tolerance,
    ),
    OpInfo(
        name="max",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.max(inputs[0], out=out),
        reference=lambda inputs, **kw: ieee_amax(inputs[0]),
        shapes=ROW_SHAPES, out_like=rows_out, inplace=False,
    ),
    OpInfo(
        name="dot",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 1),
                                                        randn(shape, dtype, device, gen, 1)],
        call=lambda inputs, out, **kw: hetkern.dot(inputs[0], inputs[1], out=out),
        reference=lambda inputs, **kw: (inputs[0].double() * inputs[1].double()).sum(-1).to(inputs[0].dtype),
        shapes=ROW_SHAPES, out_like=rows_out, inplace=False, property_values=False,
        tolerance=sum_tolerance,
    ),
    OpInfo(
        name="norm",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.norm(inputs[0], out=out),
        reference=lambda inputs, **kw: torch.linalg.vector_norm(inputs[0].double(), dim=-1).to(inputs[0].dtype),
        shapes=ROW_SHAPES, out_like=rows_out, inplace=False, tolerance=storage_tolerance(),
    ),
    # ---- normalisation (docs/norm.md) ----
    OpInfo(
        name="rmsnorm",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 2),
                                                        weights(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.rmsnorm(inputs[0], inputs[1], 1e-6, out=out),
        reference=lambda inputs, **kw: rms_reference(inputs[0], inputs[1], 1e-6),
        shapes=ROW_SHAPES, tolerance=storage_tolerance(ulps_16bit=4, f32=2e-5),
        property_values=False,
    ),
    OpInfo(
        name="fused_add_rmsnorm",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 2),
                                                        randn(shape, dtype, device, gen, 2),
                                                        weights(shape, dtype, device, gen)],
        # In place by definition: returns (x, residual); `out` does not apply.
        call=lambda inputs, out, **kw: hetkern.fused_add_rmsnorm(inputs[0], inputs[1], inputs[2], 1e-6),
        reference=lambda inputs, **kw: (
            rms_reference((inputs[0] + inputs[1]), inputs[2], 1e-6), inputs[0] + inputs[1]),
        shapes=ROW_SHAPES, inplace=False, tolerance=storage_tolerance(ulps_16bit=4, f32=2e-5),
        property_values=False,
    ),
    OpInfo(
        name="gemma_rmsnorm",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 2),
                                                        weights(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.gemma_rmsnorm(inputs[0], inputs[1], 1e-6, out=out),
        reference=lambda inputs, **kw: gemma_rms_reference(inputs[0], inputs[1], 1e-6),
        shapes=ROW_SHAPES, tolerance=storage_tolerance(ulps_16bit=4, f32=2e-5),
        property_values=False,
    ),
    OpInfo(
        name="gemma_fused_add_rmsnorm",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 2),
                                                        randn(shape, dtype, device, gen, 2),
                                                        weights(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.gemma_fused_add_rmsnorm(inputs[0], inputs[1], inputs[2], 1e-6),
        reference=lambda inputs, **kw: (
            gemma_rms_reference((inputs[0] + inputs[1]), inputs[2], 1e-6), inputs[0] + inputs[1]),
        shapes=ROW_SHAPES, inplace=False, tolerance=storage_tolerance(ulps_16bit=4, f32=2e-5),
        property_values=False,
    ),
    OpInfo(
        name="layernorm",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 2),
                                                        weights(shape, dtype, device, gen),
                                                        weights(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.layernorm(inputs[0], inputs[1], inputs[2], 1e-5, out=out),
        reference=lambda inputs, **kw: torch.nn.functional.layer_norm(
            inputs[0].double(), inputs[0].shape[-1:], inputs[1].double(), inputs[2].double(), 1e-5
        ).to(inputs[0].dtype),
        shapes=ROW_SHAPES,
        # Absolute term: float32 mean/variance errors grow like sqrt(H) eps and
        # show on outputs near 0 (x - mean cancels, + bias); docs/norm.md.
        tolerance=lambda dtype: Tolerance(
            atol=1e-12 if dtype == F64 else 2e-5,
            rtol=storage_tolerance(ulps_16bit=4, f32=2e-5)(dtype).rtol),
        property_values=False,
    ),
    OpInfo(
        name="rmsnorm_quant",
        make_inputs=quant_inputs("x", "w"),
        call=lambda inputs, out, **kw: _quant_call(hetkern.rmsnorm_quant, inputs, out, 1e-6),
        reference=lambda inputs, **kw: rms_quant_reference(inputs[0], inputs[1], inputs[2], 1e-6),
        shapes=ROW_SHAPES, out_like=quant_out, inplace=False, tolerance=quant_tolerance,
        property_values=False,
    ),
    OpInfo(
        name="fused_add_rmsnorm_quant",
        make_inputs=quant_inputs("x", "r", "w"),
        # Returns (out, residual): residual = x + residual rounded once, as torch adds.
        call=lambda inputs, out, **kw: _quant_call(hetkern.fused_add_rmsnorm_quant, inputs, out, 1e-6),
        reference=lambda inputs, **kw: (
            rms_quant_reference(inputs[0], inputs[2], inputs[3], 1e-6, residual=inputs[1]),
            inputs[0] + inputs[1]),
        shapes=ROW_SHAPES, out_like=quant_out, inplace=False, tolerance=quant_tolerance,
        property_values=False,
    ),
    OpInfo(
        name="layernorm_quant",
        make_inputs=quant_inputs("x", "w", "b"),
        call=lambda inputs, out, **kw: _quant_call(
            hetkern.layernorm_quant, inputs[:2] + inputs[3:], out, inputs[2], 1e-5),
        reference=lambda inputs, **kw: layernorm_quant_reference(
            inputs[0], inputs[1], inputs[2], inputs[3], 1e-5),
        shapes=ROW_SHAPES, out_like=quant_out, inplace=False, tolerance=quant_tolerance,
        property_values=False,
    ),
    # ---- elementwise binary (docs/elementwise.md): bit-exact vs torch ----
    *[OpInfo(
        name=name,
        make_inputs=pairs(lambda shape, dtype, device, gen: randn(shape, dtype, device, gen, 4)),
        call=lambda inputs, out, fn=fn, **kw: fn(inputs[0], inputs[1], out=out),
        reference=lambda inputs, ref=ref, **kw: ref(inputs[0], inputs[1]),
    ) for name, fn, ref in [("add", hetkern.add, torch.add), ("sub", hetkern.sub, torch.sub),
                            ("mul", hetkern.mul, torch.mul), ("div", hetkern.div, torch.div)]],
    OpInfo(
        name="add_row_broadcast",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 4),
                                                        randn(shape[-1:], dtype, device, gen, 4)],
        call=lambda inputs, out, **kw: hetkern.add(inputs[0], inputs[1], out=out),
        reference=lambda inputs, **kw: inputs[0] + inputs[1],
        shapes=ROW_SHAPES,
    ),
    OpInfo(
        name="axpby",
        make_inputs=pairs(lambda shape, dtype, device, gen: randn(shape, dtype, device, gen, 4)),
        call=lambda inputs, out, **kw: hetkern.axpby(inputs[0], inputs[1], 0.75, -1.5, out=out),
        # One rounding in the compute type per product and sum (16-bit: then once more).
        reference=lambda inputs, **kw: (
            0.75 * inputs[0].to(torch.float64 if inputs[0].dtype == F64 else F32)
            + -1.5 * inputs[1].to(torch.float64 if inputs[0].dtype == F64 else F32)
        ).to(inputs[0].dtype),
    ),
    OpInfo(
        name="cast",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 30)],
        call=lambda inputs, out, to=F32: hetkern.cast(inputs[0], to, out=out),
        reference=lambda inputs, to=F32: inputs[0].to(to),
        variants=tuple({"to": t} for t in ALL_FLOATS),
        inplace=False,
        out_like=lambda inputs, to=F32: torch.empty(inputs[0].shape, dtype=to, device=inputs[0].device),
    ),
    # ---- activations (docs/activation.md) ----
    OpInfo(
        name="relu",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.relu(inputs[0], out=out),
        # torch's CPU relu: its CUDA one turns -0 into +0 (a -0 input once
        # failed test_cuda[relu-float16-65539] that way); ours keeps -0 on both.
        reference=lambda inputs, **kw: torch.relu(inputs[0].cpu()).to(inputs[0].device),
    ),
    *[OpInfo(
        name=name,
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 3)],
        call=lambda inputs, out, fn=fn, **kw: fn(inputs[0], out=out, **kw),
        reference=lambda inputs, ref=ref, **kw: ref(inputs[0].double(), **kw).to(inputs[0].dtype),
        tolerance=tolerance,
        variants=variants,
        property_values=name != "gelu",
    ) for name, fn, ref, variants, tolerance in [
        ("sigmoid", hetkern.sigmoid, torch.sigmoid, ({},), activation_tolerance()),
        ("silu", hetkern.silu, F.silu, ({},), activation_tolerance()),
        # gelu's tanh form: 4 (1 + |z|) ulp, z = 2 k0 (x + k1 x^3) (docs/activation.md).
        ("gelu", hetkern.gelu, gelu_reference, ({"approximate": "none"}, {"approximate": "tanh"}),
         activation_tolerance(f32_ulps=400)),
        ("tanh", hetkern.tanh, torch.tanh, ({},), activation_tolerance()),
        ("exp", hetkern.exp, torch.exp, ({},), activation_tolerance()),
    ]],
    OpInfo(
        name="silu_and_mul",
        make_inputs=gated_inputs,
        call=lambda inputs, out, **kw: hetkern.silu_and_mul(inputs[0], out=out),
        reference=gated_reference(F.silu),
        shapes=ROW_SHAPES, out_like=gated_out, inplace=False, property_values=False,
        tolerance=activation_tolerance(f32_ulps=24),
    ),
    OpInfo(
        name="gelu_and_mul",
        make_inputs=gated_inputs,
        call=lambda inputs, out, **kw: hetkern.gelu_and_mul(inputs[0], out=out, **kw),
        reference=gated_reference(gelu_reference),
        shapes=ROW_SHAPES, out_like=gated_out, inplace=False, property_values=False,
        tolerance=activation_tolerance(f32_ulps=400),
        variants=({"approximate": "none"}, {"approximate": "tanh"}),
    ),
    # ---- softmax (docs/softmax.md) ----
    *[OpInfo(
        name=name,
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 2)],
        call=lambda inputs, out, fn=fn, **kw: fn(inputs[0], out=out),
        reference=lambda inputs, ref=ref, **kw: ref(inputs[0].double(), -1).to(inputs[0].dtype),
        shapes=ROW_SHAPES,
        tolerance=storage_tolerance(ulps_16bit=2, f32=64 * 2**-23, f64=64 * 2**-52),
        property_values=False,
    ) for name, fn, ref in [("softmax", hetkern.softmax, torch.softmax),
                            ("log_softmax", hetkern.log_softmax, torch.log_softmax)]],
    # ---- rotary embedding (docs/rope.md): in place on query and key ----
    OpInfo(
        name="rope",
        make_inputs=rope_inputs,
        call=lambda inputs, out, is_neox=True: hetkern.rope(
            inputs[2], inputs[0], inputs[1], inputs[3].shape[1], inputs[3], is_neox),
        reference=rope_reference,
        shapes=[(0, 1, 64), (1, 1, 64), (3, 2, 64), (7, 4, 128), (5, 3, 80), (2, 1, 256), (33, 2, 64)],
        dtypes=ALL_FLOATS, inplace=False, property_values=False,
        variants=({"is_neox": True}, {"is_neox": False}),
        layout_shape=(6, 2, 64),
    ),
]
