"""PNG plots from a results JSON: GB/s against size (log x) for every
contender, one panel per op, one figure per device, family and dtype, with
the copy bandwidth of the same bytes as the reference line.

    python -m hetkern.bench.plot results.json [more.json ...] --out DIR

Needs matplotlib (optional: pip install matplotlib); it reads only the JSON,
so a GPU machine's results can be plotted elsewhere.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

STYLE = {"hetkern": ("C0", "o", "-"), "numpy": ("C2", "s", "-"), "torch": ("C1", "^", "-"),
         "compile": ("C3", "v", "-"), "copy": ("0.5", "", "--")}


def load_rows(paths: list[str]) -> tuple[list[dict], list[dict]]:
    rows, metas = [], []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        rows += data["rows"]
        metas.append(data.get("meta", {}))
    return rows, metas


def row_length(row: dict) -> int:
    return int(str(row["shape"]).split("x")[-1])


def plot_results(json_paths, out_dir: str) -> list[str] | None:
    """Writes the PNGs and returns their paths; None when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    if isinstance(json_paths, str):
        json_paths = [json_paths]
    rows, metas = load_rows(json_paths)
    meta = metas[0] if metas else {}
    groups: dict[tuple, dict[str, list[dict]]] = {}
    for r in rows:
        groups.setdefault((r["device"], r["family"], r["dtype"]), {}).setdefault(r["op"], []).append(r)
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for (device, family, dtype), ops in sorted(groups.items()):
        cols = min(3, len(ops))
        nrows = math.ceil(len(ops) / cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
        for ax, (op, op_rows) in zip(axes.flat, ops.items()):
            op_rows = sorted(op_rows, key=lambda r: r["size"])
            # Row ops: a line through the shapes of the most common row length,
            # the other shapes as bare markers (sizes repeat across row lengths).
            main = None
            if op_rows[0].get("tokens") is not None:
                lengths = [row_length(r) for r in op_rows]
                main = max(set(lengths), key=lengths.count)
            for name in STYLE:
                key = f"{name}_gbps"
                color, marker, line = STYLE[name]
                pts = [r for r in op_rows if r.get(key)]
                on_line = [(r["size"], r[key]) for r in pts if main is None or row_length(r) == main]
                others = [(r["size"], r[key]) for r in pts if main is not None and row_length(r) != main]
                if on_line:
                    ax.plot(*zip(*on_line), color=color, marker=marker, linestyle=line, markersize=3, label=name)
                if others:
                    ax.plot(*zip(*others), color=color, marker=marker or ".", linestyle="", markersize=5,
                            markerfacecolor="none")
            ax.set_xscale("log", base=2)
            ax.set_title(op if main is None else f"{op} (line: rows of {main}; markers: other shapes)",
                         fontsize=9)
            ax.set_xlabel("elements")
            ax.set_ylabel("GB/s (read + written)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[len(ops):]:
            ax.set_visible(False)
        where = (f"{meta.get('cpu', 'CPU')}, {meta.get('cpu_threads', '?')} threads (NumPy 1)"
                 if device == "cpu" else meta.get("gpu", "GPU"))
        fig.suptitle(f"{family} {dtype} on {device}: {where}", fontsize=11)
        fig.tight_layout()
        path = os.path.join(out_dir, f"gbps-{device}-{family}-{dtype}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hetkern.bench.plot", description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="+", help="results.json written by python -m hetkern.bench")
    p.add_argument("--out", default="plots", help="directory for the PNGs (default ./plots)")
    args = p.parse_args(argv)
    written = plot_results(args.json, args.out)
    if written is None:
        print("python -m hetkern.bench.plot needs matplotlib: pip install matplotlib", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} plots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
