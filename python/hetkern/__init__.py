"""hetkern: CPU (Highway SIMD) and CUDA kernels behind one entry per op.

Every op takes NumPy arrays, torch tensors (CPU or CUDA) or any DLPack array
and runs on the device its arguments live on: the best Highway SIMD target of
this CPU, or the CUDA kernel on the caller's current stream.

The same ops are torch custom ops, ``torch.ops.hetkern.<op>`` (for
torch.compile and CUDA graphs), and JAX functions, ``hetkern.jax.<op>``; all
are generated from one registry (``hetkern._registry``, docs/frameworks.md).

Force a CPU SIMD target with ``HETKERN_CPU_TARGET=SSE4`` in the environment
or ``hetkern.set_cpu_target("SSE4")``; ``python -m hetkern`` shows the choice.
"""

from __future__ import annotations

import os as _os

import sys as _sys

from . import _lib
from ._lib import cmake_dir, include_dir, library_path, pkgconfig_dir
from ._ops import FUNCTIONS as _FUNCTIONS
from ._registry import OPS as _OPS

# Every op of the registry (python/hetkern/_registry.py) as hetkern.<op>:
# scale, add/sub/mul/div, axpby, cast, relu, sigmoid, silu, gelu, tanh, exp,
# silu_and_mul, gelu_and_mul, sum, max, dot, norm (hetkern.sum/max shadow the
# builtins on purpose), rmsnorm, fused_add_rmsnorm, gemma_rmsnorm,
# gemma_fused_add_rmsnorm, layernorm, rmsnorm_quant, fused_add_rmsnorm_quant,
# layernorm_quant, softmax, log_softmax, rope.
globals().update(_FUNCTIONS)

__version__: str = _lib.module.version()


def built_with_cuda() -> bool:
    """Whether this copy of the library holds CUDA kernels."""
    return bool(_lib.module.built_with_cuda())


def cuda_archs() -> list[str]:
    """SM versions the CUDA kernels were compiled for (PTX of the last is embedded too)."""
    return list(_lib.module.cuda_archs())


def compiled_cpu_targets() -> list[str]:
    """Highway SIMD targets compiled into the library, best first."""
    return list(_lib.module.compiled_cpu_targets())


def available_cpu_targets() -> list[str]:
    """The compiled targets this CPU can run, best first."""
    return list(_lib.module.available_cpu_targets())


def cpu_target() -> str:
    """The SIMD target the CPU kernels use now."""
    return str(_lib.module.cpu_target())


def set_cpu_target(name: str | None) -> None:
    """Force the CPU kernels onto one of `available_cpu_targets()`; None or "auto" for the best.

    Process-wide; do not change it while other threads run kernels.
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"hetkern.set_cpu_target: 'name' must be a str or None; got {type(name).__name__}")
    _lib.module.set_cpu_target("" if name is None else name)


def num_threads() -> int:
    """Threads the CPU kernels use for large arrays (small ones stay on the calling thread)."""
    return int(_lib.module.num_threads())


def set_num_threads(n: int) -> None:
    """Set the CPU kernels' thread count; 0 returns to the default
    (``HETKERN_NUM_THREADS``, else OpenMP's default: ``OMP_NUM_THREADS`` or all cores)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"hetkern.set_num_threads: 'n' must be an int; got {type(n).__name__}")
    _lib.module.set_num_threads(n)


def info() -> dict:
    """What `python -m hetkern` prints, as a dict."""
    import tvm_ffi

    return {
        "version": __version__,
        "library": str(library_path()),
        "highway": str(_lib.module.highway_version()),
        "cpu_targets_compiled": compiled_cpu_targets(),
        "cpu_targets_available": available_cpu_targets(),
        "cpu_target": cpu_target(),
        "cpu_threads": num_threads(),
        "cuda": built_with_cuda(),
        "cuda_archs": cuda_archs(),
        "tvm_ffi": tvm_ffi.__version__,
    }


if _os.environ.get("HETKERN_CPU_TARGET"):
    set_cpu_target(_os.environ["HETKERN_CPU_TARGET"])

# torch.ops.hetkern.<op> (python/hetkern/_torch.py) wherever torch is loaded;
# TVM-FFI loads it at import when it is installed.
if _sys.modules.get("torch") is not None:
    from . import _torch

    _torch.register()

__all__ = [
    "__version__",
    "available_cpu_targets",
    "built_with_cuda",
    "compiled_cpu_targets",
    "cpu_target",
    "cuda_archs",
    "cmake_dir",
    "include_dir",
    "info",
    "library_path",
    "num_threads",
    "pkgconfig_dir",
    "set_cpu_target",
    "set_num_threads",
    *(op.name for op in _OPS),
]
