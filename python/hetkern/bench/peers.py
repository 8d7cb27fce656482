"""The GPU peer libraries, where they are installed: Liger (Triton kernels,
the liger-kernel package) and FlashInfer (its own CUDA kernels behind a small
C ABI, built by ../shared/peers/prepare-peers into libfi_peer.so with
flashinfer_peer.py next to it). Each is optional: a peer that does not import
simply has no column.

FlashInfer is found through HETKERN_BENCH_FLASHINFER (the directory holding
flashinfer_peer.py and libfi_peer.so), else .gpu-carry/peers under the
current directory or its parents. Only bfloat16 is wrapped there.
FlashInfer's Gemma and fp8-quantising norms, which that library does not
wrap, come from libfi_extra.so in the same directory (built from
benchmarks/peers/fi_extra.cu by benchmarks/peers/build); FlashInferExtra
below calls it.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys


@functools.lru_cache(maxsize=None)
def liger():
    """liger_kernel.transformers.functional, or None."""
    try:
        from liger_kernel.transformers import functional
    except Exception:  # not installed, or no triton/GPU
        return None
    return functional


def _flashinfer_dirs():
    env = os.environ.get("HETKERN_BENCH_FLASHINFER")
    if env:
        yield env
    here = os.path.abspath(os.getcwd())
    while True:
        yield os.path.join(here, ".gpu-carry", "peers")
        parent = os.path.dirname(here)
        if parent == here:
            return
        here = parent


@functools.lru_cache(maxsize=None)
def flashinfer():
    """The loaded flashinfer_peer module, or None."""
    for d in _flashinfer_dirs():
        lib = os.path.join(d, "libfi_peer.so")
        if os.path.isfile(lib) and os.path.isfile(os.path.join(d, "flashinfer_peer.py")):
            if d not in sys.path:
                sys.path.insert(0, d)
            try:
                import flashinfer_peer

                flashinfer_peer.load(lib)
            except Exception:
                return None
            return flashinfer_peer
    return None


class FlashInferExtra:
    """FlashInfer's gemma_rmsnorm, gemma_fused_add_rmsnorm, rmsnorm_quant,
    fused_add_rmsnorm_quant and layernorm_quant (bfloat16 in; the quant ops
    write float8_e4m3fn and read a float32 scale tensor) on torch tensors, on
    torch's current stream, with FlashInfer's argument order."""

    _NAMES = ("fi_gemma_rmsnorm_bf16", "fi_gemma_fused_add_rmsnorm_bf16", "fi_rmsnorm_quant_bf16",
              "fi_fused_add_rmsnorm_quant_bf16", "fi_layernorm_quant_bf16")

    def __init__(self, path: str):
        self._lib = ctypes.CDLL(path)
        for name in self._NAMES:
            getattr(self._lib, name).errcheck = self._check

    @staticmethod
    def _check(result, func, args):
        if result != 0:
            raise RuntimeError(f"{func.__name__}: cudaError {result}")
        return result

    @staticmethod
    def _p(t):
        if not (t.is_cuda and t.is_contiguous()):
            raise ValueError("FlashInfer's kernels take contiguous CUDA tensors")
        return ctypes.c_void_p(t.data_ptr())

    @staticmethod
    def _s():
        import torch

        return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def gemma_rmsnorm(self, x, weight, eps, out):
        self._lib.fi_gemma_rmsnorm_bf16(self._p(x), self._p(weight), self._p(out), x.shape[0], x.shape[1],
                                        ctypes.c_float(eps), self._s())

    def gemma_fused_add_rmsnorm(self, x, residual, weight, eps):
        self._lib.fi_gemma_fused_add_rmsnorm_bf16(self._p(x), self._p(residual), self._p(weight), x.shape[0],
                                                  x.shape[1], ctypes.c_float(eps), self._s())

    def rmsnorm_quant(self, out, x, weight, scale, eps):
        self._lib.fi_rmsnorm_quant_bf16(self._p(out), self._p(x), self._p(weight), self._p(scale), x.shape[0],
                                        x.shape[1], ctypes.c_float(eps), self._s())

    def fused_add_rmsnorm_quant(self, out, x, residual, weight, scale, eps):
        self._lib.fi_fused_add_rmsnorm_quant_bf16(self._p(out), self._p(x), self._p(residual), self._p(weight),
                                                  self._p(scale), x.shape[0], x.shape[1], ctypes.c_float(eps),
                                                  self._s())

    def layernorm_quant(self, out, x, weight, bias, scale, eps):
        self._lib.fi_layernorm_quant_bf16(self._p(out), self._p(x), self._p(weight), self._p(bias),
                                          self._p(scale), x.shape[0], x.shape[1], ctypes.c_float(eps), self._s())


@functools.lru_cache(maxsize=None)
def flashinfer_extra():
    """FlashInferExtra over libfi_extra.so, or None."""
    for d in _flashinfer_dirs():
        lib = os.path.join(d, "libfi_extra.so")
        if os.path.isfile(lib):
            try:
                return FlashInferExtra(lib)
            except OSError:
                return None
    return None


def available() -> list[str]:
    return [name for name, get in (("liger", liger), ("flashinfer", flashinfer)) if get() is not None]
