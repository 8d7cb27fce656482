"""A markdown summary of results JSON files against the issue's targets.

    python -m hetkern.bench.report results.json [more.json ...] > SUMMARY.md

For every device x op x dtype: the median over the large sizes (CPU >= 4M
elements, GPU >= 64M; row ops only with >= 1024 rows; where a run has none,
its largest size, marked *) of the fraction of copy bandwidth and the ratios
to torch eager, NumPy and torch.compile, each next to its target with ✔/✘.
Then the GPU decode shapes (row ops, 1..128 tokens: device-time ratios and
the whole-call host time), every GPU row's graph-replayed device time against
each peer's (Liger, FlashInfer, torch, torch.compile) with the Python-loop
wall time, and the small CPU calls (<= 4K elements).
"""

from __future__ import annotations

import argparse
import statistics
import sys

from .cases import is_decode
from .plot import load_rows

LARGE = {"cpu": 4 << 20, "cuda": 64 << 20}
SMALL = 4 << 10
SMALL_ONLY = {"scale_alloc"}  # measured at <= 4K only: the small-call table
GATED = {"silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul"}
GPU_ROW_OPS = {"rmsnorm", "fused_add_rmsnorm", "gemma_rmsnorm", "gemma_fused_add_rmsnorm", "layernorm",
               "softmax", "log_softmax"}
METRICS = [("of_copy", "of copy"), ("of_copy_graph", "of copy (graph)"), ("x_torch", "× torch"),
           ("x_numpy", "× NumPy"), ("x_compile", "× compile"), ("x_best_graph", "best peer ÷ hetkern (graph)")]
# Families whose GPU rows the graph-time table lists (the ops the peers have).
GRAPH_FAMILIES = ("norm", "activation", "rope", "softmax")
# Issue 11's GPU targets: at the large sizes, graph time >= GPU_OF_COPY of a
# copy's and >= GPU_OF_BEST_PEER of the best peer's; at decode shapes and
# vocabulary rows, at least the best peer's.
GPU_OF_COPY, GPU_OF_BEST_PEER = 0.93, 0.97
# softmax and log_softmax over vocabulary rows: 32000 to 256K values, 1 to
# 4096 tokens.
VOCAB = (32000, 256 << 10)


def is_vocab_row(row: dict) -> bool:
    tokens = row.get("tokens")
    return (row["family"] == "softmax" and bool(tokens) and tokens <= 4096
            and VOCAB[0] <= row["size"] // tokens <= VOCAB[1])


def targets(device: str, family: str, op: str) -> dict[str, float]:
    """metric -> minimum the issue asks for at the large sizes."""
    if device == "cpu":
        if family in ("elementwise", "activation") and op not in GATED:
            return {"of_copy": 0.85, "x_torch": 1.0, "x_numpy": 1.0}
        if family == "reduce":
            return {"x_numpy": 1.0}
        if family in ("norm", "softmax") or op in GATED:
            return {"of_copy": 0.8}
        return {}
    # Issue 11: every op >= 0.93 of copy and >= 0.97x the best peer at the
    # large sizes, both in device time under graph replay with inputs that
    # the previous call did not leave in L2 (runner.measure_graphs); the row
    # ops also >= torch eager and compile.
    want = {"of_copy_graph": GPU_OF_COPY, "x_best_graph": GPU_OF_BEST_PEER}
    if op in GPU_ROW_OPS:
        want.update(x_torch=1.0, x_compile=1.0)
    return want


def mib(nbytes) -> str:
    return f"{nbytes / 2**20:.0f} MiB" if nbytes else "unknown"


def median(rows: list[dict], key: str):
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else None


def cell(value, target=None, at_most=False) -> str:
    if value is None:
        return "–"
    text = f"{value:.2f}"
    if target is None:
        return text
    ok = value <= target if at_most else value >= target
    return f"{text} {'✔' if ok else '✘'} ({'≤' if at_most else '≥'}{target:g})"


def group(rows: list[dict]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["device"], r["family"], r["op"], r["dtype"]), []).append(r)
    return groups


def large_rows(device: str, rows: list[dict]) -> tuple[list[dict], bool]:
    """The rows at the large sizes, or those at the largest size (and False)."""
    picked = [r for r in rows if r["size"] >= LARGE[device] and (r.get("tokens") is None or r["tokens"] >= 1024)]
    if picked:
        return picked, True
    biggest = max(r["size"] for r in rows)
    return [r for r in rows if r["size"] == biggest], False


def report(rows: list[dict], metas: list[dict]) -> str:
    out = ["# hetkern benchmark summary", ""]
    for meta in metas:
        where = f"CPU {meta.get('cpu', '?')} ({meta.get('cpu_threads', '?')} threads for hetkern and torch, NumPy 1"
        where += f"; LLC {mib(meta.get('cpu_llc_bytes'))})"
        if meta.get("gpu"):
            where += f"; GPU {meta['gpu']} (L2 {mib(meta.get('gpu_llc_bytes'))})"
        out.append(f"- {meta.get('date', '?')}: {where}; hetkern {meta.get('hetkern', {}).get('version', '?')}, "
                   f"torch {meta.get('torch', '?')}, NumPy {meta.get('numpy', '?')}"
                   + ("; quick run" if meta.get("quick") else ""))
        for note in meta.get("notes", []):
            out.append(f"  - note: {note}")
    out += ["", "Ratios are peer time / hetkern time (> 1: hetkern faster); *of copy* is hetkern's GB/s over a "
            "torch `copy_` of the same bytes in the same run (a Python loop's CUDA-event time on the GPU); "
            "*of copy (graph)* the same in device time under CUDA graph replay, where calls too large for "
            "L2 take 4 sets of inputs in turn, as the graph-time ratios to the peers do. Each value is the "
            "median over the sizes listed.", ""]

    groups = group(rows)
    out += ["## Large sizes (CPU ≥ 4M elements, GPU ≥ 64M; row ops with ≥ 1024 rows)", "",
            "| device | family | op | dtype | sizes | " + " | ".join(m[1] for m in METRICS) + " |",
            "|---" * (5 + len(METRICS)) + "|"]
    misses = 0
    for (device, family, op, dtype), op_rows in sorted(groups.items()):
        if op in SMALL_ONLY:
            continue
        picked, large = large_rows(device, op_rows)
        want = targets(device, family, op)
        sizes = ", ".join(dict.fromkeys(r["shape"] for r in sorted(picked, key=lambda r: r["size"])))
        if not large:
            sizes += " *"
        if any(r.get("fits_llc") for r in picked):
            sizes += " (fits LLC)"
        cells = []
        for key, _ in METRICS:
            value = median(picked, key)
            cells.append(cell(value, want.get(key)))
            misses += value is not None and key in want and value < want[key]
        out.append(f"| {device} | {family} | {op} | {dtype} | {sizes} | " + " | ".join(cells) + " |")
    out += ["", f"{misses} large-size figure(s) miss their target. * no size reached the threshold in this run: "
            "its largest size is shown.", ""]

    decode = {k: [r for r in v if k[0] == "cuda" and is_decode(k[1], r.get("tokens"))] for k, v in groups.items()}
    decode = {k: v for k, v in decode.items() if v}
    if decode:
        out += ["## GPU decode shapes (1–128 tokens)", "",
                "Device time (CUDA events) ratios, and the whole-call host time per call (perf_counter "
                "around a batch, one synchronize: launch-bound). *host ÷ torch* is hetkern's host time over "
                "torch eager's (target for rmsnorm: ≤ 0.6).", "",
                "| op | dtype | shapes | × torch | × compile | hetkern host µs | torch host µs | host ÷ torch |",
                "|---|---|---|---|---|---|---|---|"]
        for (device, family, op, dtype), op_rows in sorted(decode.items()):
            shapes = ", ".join(r["shape"] for r in op_rows)
            host = median(op_rows, "host_of_torch")
            us = [median(op_rows, k) for k in ("hetkern_host_s", "torch_host_s")]
            out.append(f"| {op} | {dtype} | {shapes} | {cell(median(op_rows, 'x_torch'))} | "
                       f"{cell(median(op_rows, 'x_compile'))} | "
                       + " | ".join("–" if v is None else f"{v * 1e6:.1f}" for v in us)
                       + f" | {cell(host, 0.6 if op == 'rmsnorm' else None, at_most=True)} |")
        out.append("")

    graph_rows = [r for r in rows if r["device"] == "cuda" and r.get("hetkern_graph_s") is not None
                  and r["family"] in GRAPH_FAMILIES]
    if graph_rows:
        peers = ("torch", "compile", "liger", "flashinfer")
        out += ["## GPU device time under CUDA graph replay", "",
                "µs per call from a CUDA graph of 20 calls replayed (launch costs removed), for hetkern and "
                "each peer; *best ÷ hetkern* is the best peer's time over hetkern's (target ≥ 1 at decode "
                f"shapes and at softmax rows of 32000-256K values, ≥ {GPU_OF_BEST_PEER} at large ones); *of copy* "
                "is a copy of the same bytes (the faster of its graph and loop times) over hetkern's graph time "
                f"(target ≥ {GPU_OF_COPY} at large sizes); *sets* is how many sets of inputs the calls took in "
                "turn (4 where they do not fit L2); *loop µs* is hetkern's wall time per call of a plain "
                "Python loop (one synchronize at the end).", "",
                "| op | dtype | shape | hetkern | " + " | ".join(peers)
                + " | best ÷ hetkern | of copy | sets | loop µs |",
                "|---" * (8 + len(peers)) + "|"]
        misses = 0
        for r in sorted(graph_rows, key=lambda r: (r["family"], r["op"], r["dtype"], r["size"])):
            us = [r.get(f"{p}_graph_s") for p in ("hetkern",) + peers]
            large = r["size"] >= LARGE["cuda"]
            target = (1.0 if is_decode(r["family"], r.get("tokens")) or is_vocab_row(r)
                      else GPU_OF_BEST_PEER if large else None)
            ratio, of_copy = r.get("x_best_graph"), r.get("of_copy_graph")
            misses += ratio is not None and target is not None and ratio < target
            misses += large and of_copy is not None and of_copy < GPU_OF_COPY
            best = f" ({r['best_graph_peer']})" if r.get("best_graph_peer") else ""
            out.append(f"| {r['op']} | {r['dtype']} | {r['shape']} | "
                       + " | ".join("–" if v is None else f"{v * 1e6:.2f}" for v in us)
                       + f" | {cell(ratio, target)}{best} | {cell(of_copy, GPU_OF_COPY if large else None)} | "
                       + f"{r.get('graph_sets') or '–'} | "
                       + ("–" if r.get("hetkern_host_s") is None else f"{r['hetkern_host_s'] * 1e6:.2f}") + " |")
        out += ["", f"{misses} graph-time figure(s) miss their target.", ""]

    small = [r for r in rows if r["device"] == "cpu" and r["family"] == "elementwise" and r["size"] <= SMALL
             and r["op"] in ("scale", "scale_alloc")]
    if small:
        out += ["## Small CPU calls (whole-call time)", "",
                "`scale` passes `out=` (target: hetkern.scale(x, 2.0, out=o) ≤ np.multiply(x, 2.0, out=o), "
                "i.e. × NumPy ≥ 1); `scale_alloc` lets both allocate.", "",
                "| op | dtype | size | hetkern µs | NumPy µs | torch µs | × NumPy | × torch |",
                "|---|---|---|---|---|---|---|---|"]
        for r in sorted(small, key=lambda r: (r["op"], r["dtype"], r["size"])):
            us = ["–" if r.get(k) is None else f"{r[k] * 1e6:.2f}" for k in ("hetkern_s", "numpy_s", "torch_s")]
            out.append(f"| {r['op']} | {r['dtype']} | {r['shape']} | " + " | ".join(us)
                       + f" | {cell(r.get('x_numpy'), 1.0 if r['op'] == 'scale' else None)}"
                       f" | {cell(r.get('x_torch'))} |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hetkern.bench.report", description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="+", help="results.json files written by python -m hetkern.bench")
    args = p.parse_args(argv)
    rows, metas = load_rows(args.json)
    sys.stdout.write(report(rows, metas) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
