#!/usr/bin/env python3
"""Per-call cost of small ops, stage by stage (docs/performance.md, "Call overhead").

For NumPy arrays and torch tensors (CPU, or CUDA with --device cuda) it
times, in ns per call:
  - TVM-FFI's floor: `testing.nop` (a packed no-op in libtvm_ffi_testing)
    with 0-3 arrays or a float: what converting the arguments costs;
  - the raw libhetkern export (`hetkern._lib.module.<op>`): conversion +
    C++ unpacking, validation, dispatch and the kernel;
  - the `hetkern.<op>` wrapper, with `out=` and allocating;
  - the library the caller already has (NumPy ufunc, torch op) doing the same.

Each figure is the median of --repeat runs of --number calls (timeit: GC off);
on CUDA each run ends with a synchronize, so a call that is not host-bound
shows its GPU time. Run from the repository root against a build, e.g.

    HETKERN_LIBRARY=$PWD/build/src/libhetkern.so PYTHONPATH=$PWD/python \\
        .venv/bin/python tools/overhead.py [--n 1024] [--no-torch]
    ... tools/overhead.py --only torch --device cuda --rows 1   (decode: 1 token x 4096)

`--no-torch` keeps torch out of the process (tvm_ffi imports it when it can).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit


def _parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1024, help="elements per array (default 1024)")
    p.add_argument("--hidden", type=int, default=4096, help="row length of the norm/softmax cases")
    p.add_argument("--rows", type=int, default=1, help="rows of the norm/softmax cases (tokens)")
    p.add_argument("--device", default="cpu", help="device of the torch tensors (cpu, cuda)")
    p.add_argument("--number", type=int, default=100_000, help="calls per timing run")
    p.add_argument("--repeat", type=int, default=9, help="timing runs; the median is shown")
    p.add_argument("--no-torch", action="store_true", help="NumPy only; torch never imported")
    p.add_argument("--only", default="", help="comma-separated section names (floor,numpy,torch)")
    return p.parse_args()


ARGS = _parse()
if ARGS.no_torch:
    sys.modules["torch"] = None  # tvm_ffi's `import torch` then fails quietly

import numpy as np  # noqa: E402
import tvm_ffi  # noqa: E402

import hetkern  # noqa: E402
from hetkern import _lib  # noqa: E402

torch = None if ARGS.no_torch else __import__("torch")


def ns(stmt: str, env: dict, sync=None) -> float:
    t = timeit.Timer(stmt, globals=env)

    def run() -> float:
        start = time.perf_counter()
        t.timeit(ARGS.number)
        if sync is not None:
            sync()
        return (time.perf_counter() - start) / ARGS.number * 1e9

    run()  # warm-up (allocator caches, first-call setup)
    return statistics.median(run() for _ in range(ARGS.repeat))


def table(title: str, rows: list[tuple[str, str]], env: dict, sync=None) -> None:
    print(f"\n### {title}\n\n| call | ns |\n| --- | ---: |")
    for label, stmt in rows:
        try:
            print(f"| `{label or stmt}` | {ns(stmt, env, sync):.0f} |", flush=True)
        except Exception as e:  # a row that cannot run says why, the rest still run
            print(f"| `{label or stmt}` | {type(e).__name__}: {e} |", flush=True)


def arrays(make, n, rows, hidden):
    x, y, o = make((n,)), make((n,)), make((n,))
    xr, orow, w = make((rows, hidden)), make((rows, hidden)), make((hidden,))
    return dict(x=x, y=y, o=o, xr=xr, orow=orow, w=w)


def main() -> None:
    only = set(filter(None, ARGS.only.split(",")))
    want = lambda s: not only or s in only  # noqa: E731
    nop = tvm_ffi.get_global_func("testing.nop")
    m = _lib.module
    print(f"hetkern {hetkern.__version__}, tvm_ffi {tvm_ffi.__version__}, numpy {np.__version__}"
          f"{'' if torch is None else ', torch ' + torch.__version__}; CPU target "
          f"{hetkern.cpu_target()}, {hetkern.num_threads()} threads (arrays this small run on "
          f"the calling thread); n={ARGS.n} float32, norm/softmax on ({ARGS.rows}, {ARGS.hidden})")

    rng = np.random.default_rng(0)
    npa = arrays(lambda s: rng.standard_normal(s).astype(np.float32), ARGS.n, ARGS.rows, ARGS.hidden)
    env = dict(np=np, hetkern=hetkern, m=m, nop=nop, **npa)
    if want("floor"):
        env["t"] = tvm_ffi.from_dlpack(npa["x"])
        table("TVM-FFI floor: packed no-op (NumPy arguments)", [
            ("", "nop()"), ("", "nop(2.0)"), ("nop(t)  # t: a tvm_ffi.Tensor", "nop(t)"),
            ("", "nop(x)"), ("", "nop(x, y)"), ("", "nop(o, x, y)"), ("", "x.__dlpack__()"),
        ], env)
    if want("numpy"):
        table("NumPy arrays", [
            ("", "np.multiply(x, 2.0, out=o)"),
            ("", "m.scale(o, x, 2.0)"),
            ("", "hetkern.scale(x, 2.0, out=o)"),
            ("", "np.multiply(x, 2.0)"),
            ("", "hetkern.scale(x, 2.0)"),
            ("", "np.add(x, y, out=o)"),
            ("", "m.add(o, x, y)"),
            ("", "hetkern.add(x, y, out=o)"),
            ("", "np.add(x, y)"),
            ("", "hetkern.add(x, y)"),
            ("", "np.add(x, 2.0, out=o)"),
            ("", "m.add(o, x, 2.0)"),
            ("", "hetkern.add(x, 2.0, out=o)"),
            ("", "hetkern.div(x, y, out=o)"),
            ("", "hetkern.axpby(x, y, 2.0, 3.0, out=o)"),
            ("", "np.maximum(x, 0.0, out=o)"),
            ("", "hetkern.relu(x, out=o)"),
            ("", "np.exp(x, out=o)"),
            ("", "hetkern.exp(x, out=o)"),
            ("", "hetkern.exp(x)"),
            ("", "m.rmsnorm(orow, xr, w, 1e-6)"),
            ("", "hetkern.rmsnorm(xr, w, out=orow)"),
            ("", "hetkern.rmsnorm(xr, w)"),
            ("", "hetkern.softmax(xr, out=orow)"),
        ], env)
    if want("torch") and torch is not None:
        tt = arrays(lambda s: torch.randn(s, device=ARGS.device), ARGS.n, ARGS.rows, ARGS.hidden)
        env = dict(torch=torch, F=torch.nn.functional, hetkern=hetkern, m=m, nop=nop,
                   H=(ARGS.hidden,), **tt)
        sync = torch.cuda.synchronize if ARGS.device.startswith("cuda") else None
        table(f"torch tensors on {ARGS.device}", [
            ("", "nop(x)"), ("", "nop(o, x, y)"),
            ("", "torch.mul(x, 2.0, out=o)"),
            ("", "m.scale(o, x, 2.0)"),
            ("", "hetkern.scale(x, 2.0, out=o)"),
            ("", "hetkern.scale(x, 2.0)"),
            ("", "torch.add(x, y, out=o)"),
            ("", "hetkern.add(x, y, out=o)"),
            ("", "x.new_empty(x.shape)"),
            ("", "F.rms_norm(xr, H, w, 1e-6)"),
            ("", "m.rmsnorm(orow, xr, w, 1e-6)"),
            ("", "hetkern.rmsnorm(xr, w, out=orow)"),
            ("", "hetkern.rmsnorm(xr, w)"),
        ], env, sync)


if __name__ == "__main__":
    main()
