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
    # out shape/dtype for a given input list (None: like inputs[0])
    out_like: Callable | None = None
    # Whether out=inputs[0] (in place) is supported.
    inplace: bool = True
    # Extra positional/keyword variants to test, e.g. approximate="tanh".
    variants: tuple = ({},)
    # Whether test_properties may feed arbitrary floats (NaN, inf, ...) and
    # expect the reference's answer (False where inputs must be well-formed).
    property_values: bool = True

    def expected_out(self, inputs):
        if self.out_like:
            return self.out_like(inputs)
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


def rows_out(inputs):
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
        name="layernorm",
        make_inputs=lambda shape, dtype, device, gen: [randn(shape, dtype, device, gen, 2),
                                                        weights(shape, dtype, device, gen),
                                                        weights(shape, dtype, device, gen)],
        call=lambda inputs, out, **kw: hetkern.layernorm(inputs[0], inputs[1], inputs[2], 1e-5, out=out),
        reference=lambda inputs, **kw: torch.nn.functional.layer_norm(
            inputs[0].double(), inputs[0].shape[-1:], inputs[1].double(), inputs[2].double(), 1e-5
        ).to(inputs[0].dtype),
        shapes=ROW_SHAPES, tolerance=storage_tolerance(ulps_16bit=4, f32=2e-5),
        property_values=False,
    ),
]
