"""`python -m hetkern.bench`: time hetkern against NumPy, torch eager and
torch.compile, op by op, and write a table, CSV, JSON and plots.

Columns and method: benchmarks/README.md in the source tree (and
hetkern.bench.runner / hetkern.bench.harness)."""

from __future__ import annotations

import argparse
import importlib
import sys

from . import FAMILIES
from .harness import all_cores, gpu_available, parse_size, thread_counts


def parse_caps(text: str | None) -> dict[str, float]:
    """'60' -> every family 60 s; '60,norm=90,rope=20' adds per-family caps."""
    caps: dict[str, float] = {}
    for part in (text or "").split(","):
        if part.strip():
            name, _, value = part.rpartition("=")
            caps[name.strip() or "*"] = float(value)
    return caps


def parse_list(text: str | None, allowed=None, what="value") -> list[str] | None:
    if not text:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if allowed is not None and t not in allowed]
    if bad:
        raise SystemExit(f"python -m hetkern.bench: unknown {what} {', '.join(bad)}; "
                         f"choose from {', '.join(allowed)}")
    return items


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hetkern.bench", description=__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("--device", choices=("cpu", "cuda", "all"), default="all",
                   help="all (default): CPU, and CUDA where a GPU and a CUDA build are present")
    p.add_argument("--family", help=f"comma-separated families (default all: {','.join(FAMILIES)})")
    p.add_argument("--ops", help="comma-separated op names (e.g. scale,rmsnorm,sum_rows)")
    p.add_argument("--dtypes", default="float32,bfloat16", help="default float32,bfloat16")
    p.add_argument("--cpu-max", type=parse_size, default="64M", help="largest CPU size in elements")
    p.add_argument("--gpu-max", type=parse_size, default="256M", help="largest GPU size in elements")
    p.add_argument("--threads", type=int, default=all_cores(),
                   help="CPU threads for hetkern, torch and the copy (default: all cores)")
    p.add_argument("--thread-sweep", nargs="?", const="all", default=None, metavar="N,N,...",
                   help="also time the largest shape of each CPU series at several thread counts "
                        "(hetkern, torch and the copy alike): 1, 2, 4, ... up to all cores by default; "
                        "printed as a scaling table, stored under 'scaling' in results.json")
    p.add_argument("--quick", action="store_true", help="few sizes, few samples (smoke runs, tests)")
    p.add_argument("--samples", type=int, default=15, help="timed samples per contender (default 15)")
    p.add_argument("--time-cap", help="seconds per family and device: '60' or '60,norm=90'")
    p.add_argument("--out", default="hetkern-bench", help="directory for results.{csv,json}, table.txt, "
                   "plots/ (default ./hetkern-bench; '' writes nothing)")
    args = p.parse_args(argv)

    try:
        import torch  # noqa: F401
    except ImportError:
        raise SystemExit("python -m hetkern.bench needs torch (pip install torch)") from None

    families = parse_list(args.family, FAMILIES, "family") or list(FAMILIES)
    dtypes = parse_list(args.dtypes, ("float32", "bfloat16", "float16", "float64"), "dtype")
    devices = ["cpu", "cuda"] if args.device == "all" else [args.device]
    if "cuda" in devices and not gpu_available():
        if args.device == "cuda":
            raise SystemExit("python -m hetkern.bench: --device cuda needs a CUDA GPU and a CUDA build of hetkern")
        devices.remove("cuda")
        print("(no CUDA GPU or CPU-only hetkern build: CPU only)")
    if args.threads < 1:
        raise SystemExit("python -m hetkern.bench: --threads must be >= 1")
    sweep = None
    if args.thread_sweep == "all":
        sweep = thread_counts(all_cores())
    elif args.thread_sweep:
        try:
            sweep = [int(t) for t in args.thread_sweep.split(",") if t.strip()]
        except ValueError:
            sweep = []
        if not sweep or min(sweep) < 1:
            raise SystemExit("python -m hetkern.bench: --thread-sweep takes thread counts >= 1, e.g. 1,2,4")

    from .runner import Options, Runner

    opts = Options(devices=devices, ops=parse_list(args.ops), dtypes=dtypes,
                   cpu_max=args.cpu_max, gpu_max=args.gpu_max, threads=args.threads, quick=args.quick,
                   time_caps=parse_caps(args.time_cap), out=args.out or None, samples=args.samples,
                   thread_sweep=sweep)
    runner = Runner(opts)
    try:
        runner.run({name: importlib.import_module(f"hetkern.bench.{name}") for name in families})
    except KeyboardInterrupt:  # keep what was measured
        runner.notes.append("interrupted: the sweep is incomplete")
        print("\ninterrupted: writing the rows measured so far")
    paths = runner.write()
    if paths:
        from .plot import plot_results

        json_path = paths[1]
        plotted = plot_results(json_path, f"{args.out}/plots")
        print(f"\nwrote {', '.join(paths)}"
              + (f" and {len(plotted)} plots in {args.out}/plots" if plotted is not None else
                 "; plots skipped: matplotlib is missing (pip install matplotlib, then "
                 f"python -m hetkern.bench.plot {json_path} --out DIR)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
