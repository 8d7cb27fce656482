"""Loads libhetkern.so through TVM-FFI and exposes its exported functions."""

from __future__ import annotations

import os
from pathlib import Path

import tvm_ffi

_PACKAGE_DIR = Path(__file__).resolve().parent


def library_path() -> Path:
    """Path of the libhetkern.so this package uses (``HETKERN_LIBRARY`` overrides it)."""
    override = os.environ.get("HETKERN_LIBRARY")
    return Path(override) if override else _PACKAGE_DIR / "lib" / "libhetkern.so"


def include_dir() -> Path:
    """Directory holding ``hetkern/hetkern.h`` for C++ programs."""
    return _PACKAGE_DIR / "include"


def pkgconfig_dir() -> Path:
    """Directory holding ``hetkern.pc``; add it to ``PKG_CONFIG_PATH``."""
    return _PACKAGE_DIR / "lib" / "pkgconfig"


def cmake_dir() -> Path:
    """Directory holding ``hetkernConfig.cmake``; pass it as ``-Dhetkern_DIR=``."""
    return _PACKAGE_DIR / "lib" / "cmake" / "hetkern"


def _load() -> tvm_ffi.Module:
    path = library_path()
    if not path.is_file():
        raise ImportError(
            f"hetkern: {path} is missing; install the package with `pip install .` "
            "(editable installs are not supported) or set HETKERN_LIBRARY"
        )
    return tvm_ffi.load_module(str(path))


module = _load()
