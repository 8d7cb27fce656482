"""The package as users meet it: `python -m hetkern`, the HETKERN_CPU_TARGET
switch, the installed library's RUNPATH; the C++ examples built against the
installed package through pkg-config, CMake and Meson; and the distributed
form: an sdist that builds offline, a CPU-only py3-none wheel built from it
(manylinux after auditwheel) that refuses CUDA tensors clearly and runs the
demo under other CPython versions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
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
    assert "Highway:              1.3.0" in text
    assert ("sm_" in text) == hetkern.built_with_cuda()


@pytest.mark.skipif(sysconfig.get_platform() != "linux-x86_64", reason="x86-64 targets")
def test_every_x86_target_of_highway_is_compiled_in():
    # Highway 1.3's x86 targets (AVX3_SPR needs GCC >= 12 or clang >= 14), and
    # SCALAR, the path of CPUs without SIMD.
    expected = ["AVX10_2", "AVX3_SPR", "AVX3_ZEN4", "AVX3_DL", "AVX3", "AVX2", "SSE4", "SSSE3",
                "SSE2", "SCALAR"]
    assert hetkern.compiled_cpu_targets() == expected


@pytest.mark.parametrize("target", hetkern.available_cpu_targets())
def test_env_var_forces_target(target):
    env = dict(os.environ, HETKERN_CPU_TARGET=target)
    text = run(sys.executable, "-m", "hetkern", env=env)
    assert f"CPU target in use:    {target}" in text


def dynamic_section(lib) -> tuple[list[str], list[str]]:
    """(NEEDED libraries, RUNPATH/RPATH entries) of an ELF shared library."""
    text = run("readelf", "-d", str(lib))
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", text)
    paths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", text)
    return needed, [entry for p in paths for entry in p.split(":")]


def assert_relocatable(lib):
    needed, runpath = dynamic_section(lib)
    assert runpath and all(entry.startswith("$ORIGIN/") for entry in runpath), runpath
    assert not [n for n in needed if n.startswith(("libpython", "libtorch", "libhwy"))], needed
    return needed, runpath


def test_installed_library_has_only_origin_relative_runpath():
    _, runpath = assert_relocatable(hetkern.library_path())
    assert "$ORIGIN/../../tvm_ffi/lib" in runpath


# meson and ninja of this Python's environment, as pip's build would find them.
BUILD_ENV = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


# ---- C++ consumers of the installed package ---------------------------------

CPP_EXAMPLE_OUTPUT = ("y[999] = 1998", "rejected as expected: ValueError",
                      "stream guard: set and restored")


def run_cpp_examples(build_dir: Path):
    """Runs what a C++ build of examples/cpp produced, without LD_LIBRARY_PATH:
    the RUNPATHs the build system chose must find libhetkern and libtvm_ffi."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    text = run(str(build_dir / "scale_demo"), env=env)
    assert all(line in text for line in CPP_EXAMPLE_OUTPUT), text
    if (build_dir / "cuda_streams").exists():  # CUDA toolkit here; skips itself without a GPU
        text = run(str(build_dir / "cuda_streams"), env=env)
        assert "two streams:" in text or "skipped: needs a CUDA GPU" in text, text


@pytest.mark.skipif(shutil.which("pkg-config") is None or shutil.which("c++") is None,
                    reason="needs pkg-config and a C++ compiler")
def test_cpp_example_through_pkg_config(tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(hetkern.pkgconfig_dir()))
    flags = run("pkg-config", "--cflags", "--libs", "hetkern", env=env).split()
    run("c++", "-std=c++17", "-O2", str(ROOT / "examples/cpp/scale_demo.cc"), *flags,
        "-o", str(tmp_path / "scale_demo"))
    run_cpp_examples(tmp_path)


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("c++") is None,
                    reason="needs cmake and a C++ compiler")
def test_cpp_examples_through_cmake_package(tmp_path):
    build = tmp_path / "build"
    run("cmake", "-S", str(ROOT / "examples/cpp"), "-B", str(build),
        f"-Dhetkern_DIR={run(sys.executable, '-m', 'hetkern', '--cmakedir').strip()}",
        "-DCMAKE_BUILD_TYPE=Release")
    run("cmake", "--build", str(build))
    run_cpp_examples(build)


@pytest.mark.skipif(shutil.which("pkg-config") is None or shutil.which("ninja", path=BUILD_ENV["PATH"]) is None,
                    reason="needs pkg-config and ninja")
def test_cpp_examples_through_meson_dependency(tmp_path):
    build = tmp_path / "build"
    env = dict(BUILD_ENV, PKG_CONFIG_PATH=str(hetkern.pkgconfig_dir()))
    run(sys.executable, "-m", "mesonbuild.mesonmain", "setup", str(build),
        str(ROOT / "examples/cpp"), env=env)
    run("ninja", "-C", str(build), env=env)
    run_cpp_examples(build)


# ---- The distributed form: sdist -> wheel -> auditwheel -> other Pythons ----

@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    """The sdist of the committed tree, as `python -m build --sdist` makes it."""
    if not (ROOT / ".git").exists():
        pytest.skip("meson dist needs a git checkout")
    out = tmp_path_factory.mktemp("sdist")
    backend = "import sys; sys.path.insert(0, 'tools/build-backend'); import hetkern_build; "
    name = run(sys.executable, "-c", backend + f"print(hetkern_build.build_sdist({str(out)!r}))",
               cwd=ROOT, env=BUILD_ENV).strip().splitlines()[-1]
    return out / name


def without_cuda_toolkit(env: dict) -> dict:
    """env as on a machine without CUDA: no directory holding nvcc on PATH,
    no variable naming a CUDA compiler (Meson finds nvcc only through those)."""
    path = [d for d in env["PATH"].split(os.pathsep) if d and shutil.which("nvcc", path=d) is None]
    env = {k: v for k, v in env.items() if k not in ("CUDACXX", "NVCC")}
    return dict(env, PATH=os.pathsep.join(path))


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory):
    """The wheel built from the sdist as on a machine without CUDA: default
    options (cuda=auto) and no nvcc, so a CPU-only wheel (the tests below check
    that), with wrap downloads forbidden: Highway's source must be inside the
    sdist."""
    out = tmp_path_factory.mktemp("wheel")
    env = without_cuda_toolkit(BUILD_ENV)
    assert shutil.which("nvcc", path=env["PATH"]) is None
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
        "-w", str(out), "-Csetup-args=--wrap-mode=nodownload", str(sdist), env=env)
    (whl,) = out.glob("*.whl")
    return whl


def test_sdist_carries_highway_source(sdist):
    with tarfile.open(sdist) as tar:
        names = set(tar.getnames())
    top = sdist.name[: -len(".tar.gz")]
    for path in ("subprojects/highway.wrap", "subprojects/packagefiles/highway/meson.build",
                 "subprojects/highway-1.3.0/hwy/highway.h", "subprojects/highway-1.3.0/meson.build",
                 "tools/build-backend/hetkern_build.py"):
        assert f"{top}/{path}" in names, path


def test_wheel_is_py3_none_platform_and_relocatable(wheel, tmp_path):
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    assert wheel.name == f"hetkern-{hetkern.__version__}-py3-none-{platform}.whl"
    with zipfile.ZipFile(wheel) as z:
        wheel_meta = z.read(f"hetkern-{hetkern.__version__}.dist-info/WHEEL").decode()
        assert f"Tag: py3-none-{platform}" in wheel_meta
        assert not [n for n in z.namelist() if re.search(r"\.(cpython|abi3)[^/]*\.so$", n)]
        z.extractall(tmp_path)
    needed, runpath = assert_relocatable(tmp_path / "hetkern/lib/libhetkern.so")
    assert runpath == ["$ORIGIN/../../tvm_ffi/lib"]
    assert "libtvm_ffi.so" in needed
    for path in ("hetkern/include/hetkern/hetkern.h", "hetkern/include/hetkern/stream.h",
                 "hetkern/lib/pkgconfig/hetkern.pc", "hetkern/lib/cmake/hetkern/hetkernConfig.cmake",
                 "hetkern/lib/cmake/hetkern/hetkernConfigVersion.cmake"):
        assert (tmp_path / path).is_file(), path


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


# Named without "cuda": the GPU machine's runs select their tests with -k
# "cuda or gpu or cupy or jax", and this one needs no GPU (a fake DLPack
# device) but builds a whole wheel; CI runs it.
def test_cpu_only_wheel_refuses_device_tensors(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as z:
        lib = z.extract("hetkern/lib/libhetkern.so", tmp_path)
    # libtvm_ffi is found by its soname: tvm_ffi is imported before the library loads.
    # The Python package is the one under test, installed or from the source tree.
    package_root = str(Path(hetkern.__file__).resolve().parents[1])
    env = dict(os.environ, HETKERN_LIBRARY=lib,
               PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), package_root]))
    text = run(sys.executable, "-c", _CPU_ONLY_CHECK, env=env)
    assert "'x' is on cuda:0, but this hetkern was built without CUDA support" in text
    assert "CUDA:                 not built" in run(sys.executable, "-m", "hetkern", env=env)


def _auditwheel():
    try:
        import auditwheel  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "auditwheel"]


# What `auditwheel show` may list: glibc, the GCC runtime, and the bundled
# libgomp. libtvm_ffi.so is not listed: it is outside the wheel (excluded), so
# show cannot resolve it and reports the plain "linux_x86_64" as consistent,
# while repair (told to exclude it) gives the manylinux tag.
ALLOWED_LIBRARIES = re.compile(r"(libc|libm|libgcc_s|libstdc\+\+)\.so\.\d+|libgomp-[0-9a-f]{8}\.so[.\d]*|libtvm_ffi\.so")


def assert_only_system_libraries(shown: str):
    listed = re.findall(r"(lib[\w.+-]+\.so[\w.]*) with versions", " ".join(shown.split()))
    assert listed and all(ALLOWED_LIBRARIES.fullmatch(lib) for lib in listed), listed
    assert "libpython" not in shown


@pytest.fixture(scope="module")
def repaired_wheel(wheel, tmp_path_factory):
    """auditwheel's manylinux wheel; libtvm_ffi is excluded (the apache-tvm-ffi
    wheel provides it, and one process must share one copy), libgomp bundled."""
    auditwheel = _auditwheel()
    if auditwheel is None:
        pytest.skip("needs auditwheel (tools/setup --test installs it)")
    out = tmp_path_factory.mktemp("repaired")
    run(*auditwheel, "repair", "--exclude", "libtvm_ffi.so", "-w", str(out), str(wheel),
        env=BUILD_ENV)  # with the environment's patchelf
    (whl,) = out.glob("*.whl")
    return whl


def test_auditwheel_manylinux_wheel(repaired_wheel, tmp_path):
    assert re.fullmatch(rf"hetkern-{re.escape(hetkern.__version__)}-py3-none-"
                        r"(manylinux_\d+_\d+_x86_64\.)*manylinux_\d+_\d+_x86_64\.whl",
                        repaired_wheel.name), repaired_wheel.name
    shown = run(*_auditwheel(), "show", str(repaired_wheel), env=BUILD_ENV)
    print(shown)
    assert_only_system_libraries(shown)
    with zipfile.ZipFile(repaired_wheel) as z:
        names = z.namelist()
        z.extractall(tmp_path)
    bundled = [n for n in names if n.startswith("hetkern.libs/")]
    assert [n for n in bundled if "libgomp" in n] and not [n for n in bundled if "tvm_ffi" in n], bundled
    _, runpath = assert_relocatable(tmp_path / "hetkern/lib/libhetkern.so")
    assert "$ORIGIN/../../tvm_ffi/lib" in runpath and "$ORIGIN/../../hetkern.libs" in runpath


OTHER_PYTHONS = [v for v in ("3.9", "3.13") if v != f"{sys.version_info[0]}.{sys.version_info[1]}"]


def _pyenv_python(version):
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(root.glob(f"{version}.*/bin/python{version}")) if root.is_dir() else []
    return found[-1] if found else None


@pytest.mark.parametrize("version", OTHER_PYTHONS)
def test_wheel_runs_demo_on_other_python(version, repaired_wheel, tmp_path):
    python = _pyenv_python(version)
    if python is None:
        pytest.skip(f"no pyenv Python {version}")
    venv = tmp_path / "venv"
    run(str(python), "-m", "venv", str(venv))
    # apache-tvm-ffi and numpy come from the index, as for any user.
    run(str(venv / "bin/python"), "-m", "pip", "install", "-q", str(repaired_wheel))
    text = run(str(venv / "bin/python"), str(ROOT / "examples/demo.py"), cwd=tmp_path)
    assert f"hetkern {hetkern.__version__}: CPU target" in text
    assert "numpy       [ 0.  2.  4.  6.  8. 10. 12. 14.]" in text
