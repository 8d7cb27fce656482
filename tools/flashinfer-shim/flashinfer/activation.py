"""flashinfer.activation's gated activations over hetkern's (x: (..., 2d) -> (..., d))."""
import hetkern


def silu_and_mul(input, out=None, enable_pdl=None):
    return hetkern.silu_and_mul(input, out=out)


def gelu_tanh_and_mul(input, out=None, enable_pdl=None):
    return hetkern.gelu_and_mul(input, "tanh", out=out)


def gelu_and_mul(input, out=None, enable_pdl=None):
    return hetkern.gelu_and_mul(input, out=out)


def gen_act_and_mul_module(name):
    raise NotImplementedError("hetkern has no FlashInfer JIT modules")
