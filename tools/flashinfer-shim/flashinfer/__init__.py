"""A stand-in `flashinfer` whose norm and gated-activation entries are hetkern's
(see ../README.md). Only what FlashInfer's norm and activation tests call is here."""
from . import activation, jit, norm, utils  # noqa: F401
from .activation import gelu_and_mul, gelu_tanh_and_mul, silu_and_mul  # noqa: F401
from .norm import (  # noqa: F401
    fused_add_rmsnorm,
    fused_add_rmsnorm_quant,
    gemma_fused_add_rmsnorm,
    gemma_rmsnorm,
    layernorm,
    layernorm_quant,
    rmsnorm,
    rmsnorm_quant,
)
