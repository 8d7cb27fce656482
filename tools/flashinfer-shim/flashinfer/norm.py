"""flashinfer.norm's signatures over hetkern's ops. `enable_pdl` is accepted and
ignored: hetkern's CUDA kernels launch with programmatic dependent launch on sm_90."""
import hetkern


def rmsnorm(input, weight, eps=1e-6, out=None, enable_pdl=None):
    return hetkern.rmsnorm(input, weight, eps, out=out)


def rmsnorm_quant(out, input, weight, scale, eps=1e-6, enable_pdl=None):
    hetkern.rmsnorm_quant(out, input, weight, scale, eps)
    return out


def fused_add_rmsnorm(input, residual, weight, eps=1e-6, enable_pdl=None):
    hetkern.fused_add_rmsnorm(input, residual, weight, eps)


def fused_add_rmsnorm_quant(out, input, residual, weight, scale, eps=1e-6, enable_pdl=None):
    hetkern.fused_add_rmsnorm_quant(out, input, residual, weight, scale, eps)
    return out


def gemma_rmsnorm(input, weight, eps=1e-6, out=None, enable_pdl=None):
    return hetkern.gemma_rmsnorm(input, weight, eps, out=out)


def gemma_fused_add_rmsnorm(input, residual, weight, eps=1e-6, enable_pdl=None):
    hetkern.gemma_fused_add_rmsnorm(input, residual, weight, eps)


def layernorm(input, gemma, beta, eps=1e-6):
    return hetkern.layernorm(input, gemma, beta, eps)


def layernorm_quant(out, input, gemma, beta, scale, eps=1e-6):
    hetkern.layernorm_quant(out, input, gemma, scale, beta, eps)
    return out
