"""The installed package as a user meets it: `python -m hetkern`, the
HETKERN_CPU_TARGET switch, the C++ example linked through pkg-config, and a
CPU-only build that refuses CUDA tensors with a clear message."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hetkern

ROOT = Path(__file__).resolve().parent.parent


def run(*cmd, env=None, cwd=None) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_python_m_hetkern_reports_build():
    text = run(sys.executable, "-m", "hetkern")
    import tvm_ffi

    assert f"hetkern {hetkern.__version__}" in text
    assert ", ".join(hetkern.compiled_cpu_targets()) in text
    assert f"CPU target in use:    {hetkern.available_cpu_targets()[0]}" in text
    assert tvm_ffi.__version__ in text
    assert ("sm_" in text) == hetkern.built_with_cuda()


@pytest.mark.parametrize("target", hetkern.available_cpu_targets())
def test_env_var_forces_target(target):
    env = dict(os.environ, HETKERN_CPU_TARGET=target)
    text = run(sys.executable, "-m", "hetkern", env=env)
    assert f"CPU target in use:    {target}" in text


def test_installed_library_has_no_build_paths():
    lib = hetkern.library_path()
    dynamic = run("readelf", "-d", str(lib))
    runpaths = [line for line in dynamic.splitlines() if "RUNPATH" in line or "RPATH" in line]
    assert runpaths and all("$ORIGIN" in line for line in runpaths), runpaths
    assert "libpython" not in dynamic and "libtorch" not in dynamic


@pytest.mark.skipif(shutil.which("pkg-config") is None or shutil.which("c++") is None,
                    reason="needs pkg-config and a C++ compiler")
def test_cpp_example_links_installed_library(tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(hetkern.pkgconfig_dir()))
    flags = run("pkg-config", "--cflags", "--libs", "hetkern", env=env).split()
    exe = tmp_path / "scale_demo"
    run("c++", "-std=c++17", "-O2", str(ROOT / "examples/cpp/scale_demo.cc"), *flags, "-o", str(exe))
    text = run(str(exe), env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"})
    assert "y[999] = 1998" in text and "rejected as expected: ValueError" in text


_CPU_ONLY_CHECK = """
import numpy as np, hetkern
from conftest import FakeDLPackArray
assert not hetkern.built_with_cuda()
x = np.arange(5, dtype=np.float32)
np.testing.assert_array_equal(hetkern.scale(x, 3.0), x * 3)
try:
    hetkern.scale(FakeDLPackArray((8,), device_type=2), 2.0, out=FakeDLPackArray((8,), device_type=2))
except ValueError as e:
    print(e)
"""


@pytest.mark.skipif(shutil.which("ninja") is None, reason="needs ninja")
def test_cpu_only_build_works_and_refuses_cuda(tmp_path):
    build = tmp_path / "build"
    run(sys.executable, "-m", "mesonbuild.mesonmain", "setup", str(build), str(ROOT), "-Dcuda=disabled")
    run("ninja", "-C", str(build))
    env = dict(os.environ, HETKERN_LIBRARY=str(build / "src" / "libhetkern.so"),
               PYTHONPATH=str(Path(__file__).parent))
    text = run(sys.executable, "-c", _CPU_ONLY_CHECK, env=env)
    assert "'x' is on cuda:0, but this hetkern was built without CUDA support" in text
    assert "CUDA:                 not built" in run(sys.executable, "-m", "hetkern", env=env)
