"""PEP 517 build backend: meson-python, with the wheel tagged py3-none-<platform>.

hetkern's native code is one plain shared library, ``hetkern/lib/libhetkern.so``,
that links neither libpython nor any Python extension API; the Python package is
pure Python and loads the library through tvm_ffi. meson-python tags every wheel
with native files inside the package (its "platlib") as a CPython extension
(``cp311-cp311-<platform>``) and has no setting to say otherwise, so this backend
checks that the wheel holds no extension module and no library that needs
libpython, then retags it ``py3-none-<platform>``: one wheel for every Python.
Everything else (sdist, metadata, editable installs) is meson-python's.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import zipfile
from pathlib import Path

import mesonpy
from mesonpy import (  # noqa: F401  (the rest of the PEP 517/660 interface, unchanged)
    build_editable,
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)

# cpython-311-x86_64-linux-gnu.so, abi3.so, .pyd: files only an extension module has.
_EXTENSION_MODULE = re.compile(r"\.(cpython-|pypy|abi3)[^/]*\.so$|\.pyd$")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = mesonpy.build_wheel(wheel_directory, config_settings, metadata_directory)
    return retag_py3_none(Path(wheel_directory) / name).name


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def retag_py3_none(wheel: Path) -> Path:
    """Rewrites `wheel` (meson-python's output) as <name>-<version>-py3-none-<platform>.whl."""
    dist, version, _python, _abi, platform = wheel.name[: -len(".whl")].split("-")
    target = wheel.with_name(f"{dist}-{version}-py3-none-{platform}.whl")
    if target == wheel:
        return wheel
    tag = f"py3-none-{platform}"
    with zipfile.ZipFile(wheel) as src:
        for info in src.infolist():
            if _EXTENSION_MODULE.search(info.filename):
                raise RuntimeError(f"{info.filename} is a Python extension module; "
                                   "the wheel cannot be tagged py3-none")
            if info.filename.endswith(".so") and b"libpython" in src.read(info):
                raise RuntimeError(f"{info.filename} refers to libpython; "
                                   "the wheel cannot be tagged py3-none")
        wheel_file = next(i.filename for i in src.infolist()
                          if i.filename.endswith(".dist-info/WHEEL"))
        record_file = wheel_file[: -len("WHEEL")] + "RECORD"
        wheel_text = src.read(wheel_file).decode()
        wheel_text = re.sub(r"(?m)^Tag: .*$", f"Tag: {tag}", wheel_text).encode()
        record = []
        for line in src.read(record_file).decode().splitlines():
            if line.startswith(wheel_file + ","):
                line = f"{wheel_file},{_record_hash(wheel_text)},{len(wheel_text)}"
            record.append(line)
        record_text = ("\n".join(record) + "\n").encode()
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                data = {wheel_file: wheel_text, record_file: record_text}.get(
                    info.filename) or src.read(info)
                dst.writestr(info, data)
    os.remove(wheel)
    return target
