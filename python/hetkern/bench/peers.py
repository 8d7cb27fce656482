"""The GPU peer libraries, where they are installed: Liger (Triton kernels,
the liger-kernel package) and FlashInfer (its own CUDA kernels behind a small
C ABI, built by ../shared/peers/prepare-peers into libfi_peer.so with
flashinfer_peer.py next to it). Each is optional: a peer that does not import
simply has no column.

FlashInfer is found through HETKERN_BENCH_FLASHINFER (the directory holding
flashinfer_peer.py and libfi_peer.so), else .gpu-carry/peers under the
current directory or its parents. Only bfloat16 is wrapped there.
"""

from __future__ import annotations

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


def available() -> list[str]:
    return [name for name, get in (("liger", liger), ("flashinfer", flashinfer)) if get() is not None]
