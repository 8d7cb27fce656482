"""`python -m hetkern`: what this copy of hetkern was built with and runs on.

Flags for C++ builds, like tvm-ffi-config: --cflags, --libs, --includedir,
--libdir, --pkgconfigdir (for pkg-config and Meson), --cmakedir (hetkern_DIR
for CMake's find_package(hetkern CONFIG)).
"""

from __future__ import annotations

import argparse
import sys

import hetkern


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hetkern", description=__doc__.splitlines()[0])
    for flag in ("cflags", "libs", "includedir", "libdir", "pkgconfigdir", "cmakedir"):
        parser.add_argument(f"--{flag}", action="store_true")
    args = parser.parse_args(argv)

    import tvm_ffi.libinfo as tvm_info

    libdir = hetkern.library_path().parent
    tvm_inc = tvm_info.find_include_path()
    tvm_dlpack = tvm_info.find_dlpack_include_path()
    tvm_libdir = str(__import__("pathlib").Path(tvm_info.find_libtvm_ffi()).parent)
    answers = {
        "includedir": str(hetkern.include_dir()),
        "libdir": str(libdir),
        "pkgconfigdir": str(hetkern.pkgconfig_dir()),
        "cmakedir": str(hetkern.cmake_dir()),
        "cflags": " ".join(f"-I{d}" for d in dict.fromkeys([str(hetkern.include_dir()), tvm_inc, tvm_dlpack])),
        "libs": f"-L{libdir} -lhetkern -Wl,-rpath,{libdir} -L{tvm_libdir} -ltvm_ffi -Wl,-rpath,{tvm_libdir}",
    }
    asked = [k for k in answers if getattr(args, k)]
    if asked:
        print(" ".join(answers[k] for k in asked))
        return 0

    info = hetkern.info()
    print(f"hetkern {info['version']}")
    print(f"  library:              {info['library']}")
    print(f"  Highway:              {info['highway']}")
    print(f"  CPU targets compiled: {', '.join(info['cpu_targets_compiled'])}")
    print(f"  CPU targets this CPU: {', '.join(info['cpu_targets_available'])}")
    print(f"  CPU target in use:    {info['cpu_target']}")
    print(f"  CPU threads:          {info['cpu_threads']}")
    if info["cuda"]:
        print(f"  CUDA:                 built for sm_{', sm_'.join(info['cuda_archs'])} (+PTX)")
    else:
        print("  CUDA:                 not built (CPU-only library)")
    print(f"  tvm-ffi:              {info['tvm_ffi']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
