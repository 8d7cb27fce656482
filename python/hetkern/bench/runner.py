"""The sweep: build every family's cases, time each contender, print one
table, write CSV and JSON (and plots where matplotlib imports).

Every row is one case (op, dtype, shape, device); its columns are COLUMNS.
Ratios are peer time / hetkern time (> 1: hetkern is faster); of_copy is
hetkern's GB/s over the GB/s of a torch copy_ moving the same bytes in the
same run; host_of_torch (GPU decode shapes) is hetkern's whole-call time over
torch eager's (< 1: hetkern is cheaper). On CUDA every contender is also
timed under CUDA graph replay (`*_graph_s`); x_best_graph is the best peer's
graph time over hetkern's (>= 1: hetkern at least as fast as every peer),
with graph_sets sets of inputs called in turn (more than one where the case
does not fit L2; harness's docstring says why), and of_copy_graph is a
copy's time (copy_reference_s) over hetkern's graph time."""

from __future__ import annotations

import csv
import datetime
import gc
import json
import os
import sys
import time
from dataclasses import dataclass, field

from . import harness
from .cases import Case

PEERS = ("numpy", "torch", "compile", "liger", "flashinfer")
GPU_PEERS = ("torch", "compile", "liger", "flashinfer")
COLUMNS = (
    ["device", "family", "op", "dtype", "shape", "size", "tokens", "threads", "bytes", "fits_llc",
     "hetkern_s", "hetkern_min_s", "hetkern_max_s", "hetkern_gbps", "samples"]
    + [f"{p}{suffix}" for p in PEERS for suffix in ("_s", "_gbps")]
    + [f"x_{p}" for p in PEERS]
    + ["copy_s", "copy_gbps", "of_copy", "hetkern_host_s", "torch_host_s", "host_of_torch"]
    + ["hetkern_graph_s"] + [f"{p}_graph_s" for p in GPU_PEERS] + ["best_graph_peer", "x_best_graph"]
    + ["graph_sets", "copy_graph_s", "of_copy_graph"]
)
PEERS_SHOWN = {"cpu": ("numpy", "torch"), "cuda": ("torch", "compile")}


@dataclass
class Options:
    devices: list[str]
    ops: list[str] | None
    dtypes: list[str]
    cpu_max: int
    gpu_max: int
    threads: int
    quick: bool
    time_caps: dict[str, float]  # family (or "*") -> seconds per device pass
    out: str | None
    samples: int = 15
    max_total_s: float = 1.0
    thread_sweep: list[int] | None = None  # CPU thread counts for the largest shape of each series


@dataclass
class Progress:
    """A bar on stderr (tqdm when importable, else a one-line counter), only
    when stderr is a terminal; table lines go to stdout around it."""

    total: int
    done: int = 0
    bar: object = None
    tty: bool = field(default_factory=lambda: sys.stderr.isatty())

    def __post_init__(self):
        if self.tty:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=self.total, file=sys.stderr, unit="case", dynamic_ncols=True)
            except ImportError:
                pass

    def step(self, what: str, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.set_description(what, refresh=False)
            self.bar.update(n)
        elif self.tty:
            sys.stderr.write(f"\r\033[K[{self.done}/{self.total}] {what}")
            sys.stderr.flush()

    def print(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            if self.tty:
                sys.stderr.write("\r\033[K")
                sys.stderr.flush()
            print(line, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.tty:
            sys.stderr.write("\r\033[K")


def error_text(e: Exception) -> str:
    first = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
    return f"{type(e).__name__}: {first}"


def fmt_time(s) -> str:
    if s is None:
        return "-"
    return f"{s * 1e6:.1f}us" if s < 1e-3 else f"{s * 1e3:.2f}ms" if s < 1 else f"{s:.2f}s"


def fmt_num(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def header(device: str) -> str:
    peers = "".join(f" {p:>9} {'x ' + p[:5]:>7}" for p in PEERS_SHOWN[device])
    graph = ""
    if device == "cuda":
        graph = " | graph:" + "".join(f" {p[:7]:>7}" for p in ("hetkern",) + GPU_PEERS) + f" {'best/h':>6}"
    host = "  host: hetkern/torch" if device == "cuda" else ""
    return (f"{'op':<18} {'dtype':<8} {'shape':>11} {'hetkern':>9} {'spread':>6} {'GB/s':>7} {'of copy':>7}"
            f"{peers} {'copy GB/s':>9}{graph}{host}")


def table_line(row: dict) -> str:
    line = (f"{row['op']:<18} {row['dtype']:<8} {row['shape']:>11} {fmt_time(row['hetkern_s']):>9} "
            f"{(row['hetkern_max_s'] - row['hetkern_min_s']) / row['hetkern_s']:>6.0%} "
            f"{row['hetkern_gbps']:>7.1f} {row['of_copy']:>7.2f}")
    for p in PEERS_SHOWN[row["device"]]:
        line += f" {fmt_time(row[f'{p}_s']):>9} {fmt_num(row[f'x_{p}'], '.2f'):>7}"
    line += f" {row['copy_gbps']:>9.1f}"
    if row["device"] == "cuda":
        line += " | graph:" + "".join(f" {fmt_time(row[f'{p}_graph_s']):>7}" for p in ("hetkern",) + GPU_PEERS)
        line += f" {fmt_num(row['x_best_graph'], '.2f'):>6}"
    if row["hetkern_host_s"] is not None:
        line += (f"  host {fmt_time(row['hetkern_host_s'])}/{fmt_time(row['torch_host_s'])}"
                 f" = {fmt_num(row['host_of_torch'], '.2f')}")
    return line


class Runner:
    def __init__(self, opts: Options):
        self.opts = opts
        self.rows: list[dict] = []
        self.lines: list[str] = []
        self.notes: list[str] = []
        self.scaling: list[dict] = []  # the thread sweep's rows (not in `rows`: one thread count there)
        self._copy: dict[tuple, harness.Timing] = {}
        self._compiled: dict[tuple, object] = {}
        self.threads = opts.threads

    # ---- output ---------------------------------------------------------------
    def say(self, line: str) -> None:
        self.lines.append(line)
        self.progress.print(line)

    def note(self, text: str) -> None:
        self.notes.append(text)
        self.say(f"   note: {text}")

    # ---- timing ---------------------------------------------------------------
    def timer(self, device: str, host: bool = False, graph: bool = False):
        fn = (harness.time_cpu if device == "cpu" else harness.time_cuda_host if host
              else harness.time_cuda_graph if graph else harness.time_cuda)
        samples = 5 if self.opts.quick else self.opts.samples
        max_total = 0.05 if self.opts.quick else self.opts.max_total_s
        return lambda f: fn(f, samples=samples, max_total_s=max_total)

    def copy_timing(self, device: str, nbytes: int) -> harness.Timing:
        key = (device, nbytes, self.threads if device == "cpu" else None)
        if key not in self._copy:
            self._copy[key] = self.timer(device)(harness.copy_fn(device, nbytes))
        return self._copy[key]

    def compiled(self, case: Case, fn):
        """torch.compile of the case's functional form, one per (op, dtype)
        series with torch's default automatic dynamic shapes (static for the
        first shape, one dynamic recompile after), as a serving stack would use it."""
        import torch

        key = (case.family, case.op, case.dtype)
        if key not in self._compiled:
            self._compiled[key] = torch.compile(fn)
        return self._compiled[key]

    def contenders(self, case: Case, device: str, use_compile: bool, notes: bool = True) -> dict:
        """A fresh set of the case's arrays and its contenders' calls on them:
        torch.compile's (compiled outside any timing) where asked, no NumPy on
        the GPU."""
        contenders = case.setup(device)
        compile_src = contenders.pop("compile", None)
        if device != "cpu":
            contenders.pop("numpy", None)
        if use_compile and compile_src is not None:
            fn, args = compile_src
            compiled = self.compiled(case, fn)
            try:
                compiled(*args)  # compile (or recompile) outside the timing
                contenders["compile"] = lambda: compiled(*args)
            except Exception as e:  # a form inductor cannot compile: no column
                if notes:
                    self.note(f"torch.compile failed for {case.op} {case.dtype} {case.label}: {error_text(e)}")
        return contenders

    def measure(self, case: Case, device: str, use_compile: bool) -> dict:
        timer = self.timer(device)
        contenders = self.contenders(case, device, use_compile)
        hetkern_fn = contenders.pop("hetkern")
        times = {"hetkern": timer(hetkern_fn)}  # hetkern failing fails the case
        for name, fn in contenders.items():
            try:
                times[name] = timer(fn)
            except Exception as e:  # a peer without this dtype or shape: no column
                self.note(f"{name} failed for {case.op} {case.dtype} {case.label}: {error_text(e)}")
        t_h = times["hetkern"]
        t_copy = self.copy_timing(device, case.nbytes)
        llc = self.llc[device]
        row = dict.fromkeys(COLUMNS)
        row.update(device=device, family=case.family, op=case.op, dtype=case.dtype, shape=case.label,
                   size=case.size, tokens=case.tokens, threads=self.threads if device == "cpu" else None,
                   bytes=case.nbytes, fits_llc=bool(llc) and case.nbytes <= llc,
                   hetkern_s=t_h.median_s, hetkern_min_s=t_h.min_s, hetkern_max_s=t_h.max_s,
                   hetkern_gbps=t_h.gbps(case.nbytes), samples=t_h.samples,
                   copy_s=t_copy.median_s, copy_gbps=t_copy.gbps(case.nbytes),
                   of_copy=t_copy.median_s / t_h.median_s)
        for p in PEERS:
            if p in times:
                row[f"{p}_s"] = times[p].median_s
                row[f"{p}_gbps"] = times[p].gbps(case.nbytes)
                row[f"x_{p}"] = times[p].median_s / t_h.median_s
        if device == "cuda":
            host = self.timer(device, host=True)
            row["hetkern_host_s"] = host(hetkern_fn).median_s
            if case.decode and "torch" in times:
                row["torch_host_s"] = host(contenders["torch"]).median_s
                row["host_of_torch"] = row["hetkern_host_s"] / row["torch_host_s"]
            peers = {p: contenders[p] for p in GPU_PEERS if p in times}
            self.measure_graphs(case, row, {"hetkern": hetkern_fn, **peers}, use_compile)
        return row

    def copy_graph_s(self, nbytes: int, sets: int) -> float:
        """A copy of nbytes under graph replay, on `sets` sets of buffers and on
        one, the faster (a copy streams its source and destination once, so
        one set leaves it nothing useful in L2)."""
        key = ("cuda-graph", nbytes, sets)
        if key not in self._copy:
            timer = self.timer("cuda", graph=True)
            times = [timer(harness.copy_fn("cuda", nbytes))]
            if sets > 1:
                times.append(timer(harness.in_turn([harness.copy_fn("cuda", nbytes) for _ in range(sets)])))
            self._copy[key] = min(times, key=lambda t: t.median_s)
        return self._copy[key].median_s

    def measure_graphs(self, case: Case, row: dict, calls: dict, use_compile: bool) -> None:
        """Device time per call under CUDA graph replay of hetkern and each
        peer (harness.time_cuda_graph), the best peer's over hetkern's, and a
        copy of the same bytes (copy_graph_s). A case that does not fit L2
        calls harness.GRAPH_SETS sets of its arrays in turn, every contender
        alike (harness's docstring says why)."""
        sets = 1 if row["fits_llc"] else harness.GRAPH_SETS
        calls = {name: [fn] for name, fn in calls.items()}
        for _ in range(sets - 1):
            more = self.contenders(case, "cuda", use_compile, notes=False)
            for name, fns in calls.items():
                fns.append(more.get(name, fns[0]))
        row["graph_sets"] = sets
        timer = self.timer("cuda", graph=True)
        for name, fns in calls.items():
            try:
                row[f"{name}_graph_s"] = timer(harness.in_turn(fns)).median_s
            except Exception as e:  # e.g. a peer that cannot be captured
                if name == "hetkern":
                    raise
                self.note(f"{name} not graph-capturable for {case.op} {case.dtype} {case.label}: {error_text(e)}")
        row["copy_graph_s"] = self.copy_graph_s(case.nbytes, sets)
        row["of_copy_graph"] = copy_reference_s(row) / row["hetkern_graph_s"]
        peers = [p for p in calls if p != "hetkern" and row[f"{p}_graph_s"] is not None]
        best = min(peers, key=lambda p: row[f"{p}_graph_s"], default=None)
        if best is not None:
            row["best_graph_peer"] = best
            row["x_best_graph"] = row[f"{best}_graph_s"] / row["hetkern_graph_s"]

    # ---- the sweep ------------------------------------------------------------
    def device_setup(self, device: str) -> str:
        import torch

        import hetkern

        if device == "cpu":
            self.set_threads(self.opts.threads)
            return (f"hetkern and torch at {self.opts.threads} thread(s), the copy (torch copy_) too; "
                    f"NumPy single-threaded; hetkern target {hetkern.cpu_target()}; "
                    f"LLC {self.llc['cpu'] / 2**20:.0f} MiB; "
                    f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(default)')}")
        from . import peers

        return (f"{torch.cuda.get_device_name()}; CUDA-event device times of a Python loop, and per call "
                f"from a graph of {harness.GRAPH_CALLS} calls replayed; L2 {self.llc['cuda'] / 2**20:.0f} MiB; "
                f"torch.compile {'on' if self.use_compile else 'off (triton not importable)'}; "
                f"peers: {', '.join(peers.available()) or 'none (liger, flashinfer not found)'}")

    def set_threads(self, n: int) -> None:
        """hetkern, torch and the copy reference at n CPU threads."""
        import torch

        import hetkern

        hetkern.set_num_threads(n)
        torch.set_num_threads(n)
        self.threads = n

    def sweep_threads(self, case: Case) -> None:
        """The case (a series' largest shape) again at each thread count of
        the sweep, copy and torch at the same count; rows go to `scaling`."""
        for n in self.opts.thread_sweep:
            self.set_threads(n)
            try:
                self.scaling.append(self.measure(case, "cpu", False))
            except Exception as e:
                self.note(f"thread sweep: {case.op} {case.dtype} {case.label} at {n} threads failed: "
                          f"{error_text(e)}")
            gc.collect()
        self.set_threads(self.opts.threads)

    def scaling_table(self) -> list[str]:
        counts = self.opts.thread_sweep
        head = f"{'op':<18} {'dtype':<8} {'shape':>11}" + "".join(
            f" | {n:>3}t {'GB/s':>6} {'ofcopy':>6} {'xtorch':>6}" for n in counts)
        lines = ["", f"--- cpu / thread scaling (largest shape of each series; hetkern GB/s, of copy and "
                 f"x torch at the same thread count)", head]
        by_case: dict[tuple, dict[int, dict]] = {}
        for r in self.scaling:
            by_case.setdefault((r["op"], r["dtype"], r["shape"]), {})[r["threads"]] = r
        for (op, dtype, shape), per_n in by_case.items():
            line = f"{op:<18} {dtype:<8} {shape:>11}"
            for n in counts:
                r = per_n.get(n)
                line += (f" | {'':>4} {r['hetkern_gbps']:>6.1f} {r['of_copy']:>6.2f} {fmt_num(r['x_torch'], '.2f'):>6}"
                         if r else f" | {'':>4} {'-':>6} {'-':>6} {'-':>6}")
            lines.append(line)
        return lines

    def run(self, family_modules: dict) -> None:
        opts = self.opts
        self.llc = {"cpu": harness.cpu_llc_bytes()}
        if "cuda" in opts.devices:
            self.llc["cuda"] = harness.gpu_llc_bytes()
        self.use_compile = "cuda" in opts.devices and harness.triton_available()
        if self.use_compile:
            import torch._dynamo

            # One compiled function per op and dtype sees every shape of the
            # sweep: never fall back to eager silently for hitting the limit.
            cfg = torch._dynamo.config
            for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                         "accumulated_cache_size_limit"):
                if hasattr(cfg, name):
                    setattr(cfg, name, max(getattr(cfg, name), 1024))
        plan, known = [], set()
        for device in opts.devices:
            limit = opts.cpu_max if device == "cpu" else opts.gpu_max
            for name, module in family_modules.items():
                cases = module.cases(device, opts.dtypes, limit, opts.quick)
                known.update(c.op for c in cases)
                cases = [c for c in cases if opts.ops is None or c.op in opts.ops]
                if cases:
                    plan.append((device, name, cases))
        unknown = sorted(set(opts.ops or ()) - known)
        if unknown:
            raise SystemExit(f"python -m hetkern.bench: no case for op(s) {', '.join(unknown)} in the chosen "
                             f"families, devices, dtypes and sizes; ops there: {', '.join(sorted(known))}")
        self.progress = Progress(sum(len(c) for _, _, c in plan))
        try:
            current = None
            for device, name, cases in plan:
                if device != current:
                    self.say(f"\n==== {device}: {self.device_setup(device)}")
                    current = device
                self.run_family(device, name, cases)
        finally:
            self.progress.close()
        if self.scaling:
            for line in self.scaling_table():
                self.say(line)

    def run_family(self, device: str, name: str, cases: list[Case]) -> None:
        """Each op x dtype series runs largest size first, so that a time cap
        drops the small sizes rather than the large ones (which the report
        judges); its rows are printed in size order once it is done. With a
        cap, every series gets an equal share of what is left of it: the first
        (largest) case always runs while the family is within its cap, the
        next ones while the series is within its share."""
        cap = self.opts.time_caps.get(name, self.opts.time_caps.get("*"))
        self.say(f"\n--- {device} / {name}" + (f" (time cap {cap:g} s)" if cap else ""))
        self.say(header(device))
        series: dict[tuple, list[Case]] = {}
        for case in cases:
            series.setdefault((case.op, case.dtype), []).append(case)
        start = time.perf_counter()
        for i, ((op, dtype), items) in enumerate(series.items()):
            items = sorted(items, key=lambda c: -c.size)
            series_start = time.perf_counter()
            share = (cap - (series_start - start)) / (len(series) - i) if cap else None
            rows = []
            for j, case in enumerate(items):
                now = time.perf_counter()
                if cap and (now - start >= cap or (j > 0 and now - series_start >= share)):
                    self.progress.step(f"{device} {name}: capped", len(items) - j)
                    self.note(f"time cap {cap:g} s ({device}/{name}): skipped {op} {dtype} at "
                              f"{', '.join(c.label for c in items[j:])}")
                    break
                self.progress.step(f"{device} {name} {op} {dtype} {case.label}")
                try:
                    rows.append(self.measure(case, device, self.use_compile and device == "cuda"))
                except Exception as e:  # e.g. out of memory: the sweep goes on
                    self.note(f"{op} {dtype} {case.label} failed: {error_text(e)}")
                gc.collect()
                if device == "cuda":
                    import torch

                    torch.cuda.empty_cache()
            for row in sorted(rows, key=lambda r: r["size"]):
                self.rows.append(row)
                self.say(table_line(row))
            if device == "cpu" and self.opts.thread_sweep and rows:
                largest = max(rows, key=lambda r: r["size"])
                self.sweep_threads(next(c for c in items if c.label == largest["shape"]))

    # ---- files ----------------------------------------------------------------
    def meta(self) -> dict:
        import numpy as np
        import torch

        import hetkern

        meta = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "argv": sys.argv,
            "hetkern": hetkern.info(),
            "numpy": np.__version__,
            "torch": torch.__version__,
            "cpu": harness.cpu_model(),
            "cpu_threads": self.opts.threads,
            "cpu_thread_sweep": self.opts.thread_sweep,
            "numpy_threads": 1,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
            "cpu_llc_bytes": self.llc["cpu"],
            "devices": self.opts.devices,
            "dtypes": self.opts.dtypes,
            "quick": self.opts.quick,
            "samples": self.opts.samples,
            "method": harness.__doc__.strip(),
            "notes": self.notes,
        }
        if "cuda" in self.opts.devices:
            meta.update(gpu=torch.cuda.get_device_name(), gpu_llc_bytes=self.llc["cuda"],
                        torch_compile=self.use_compile)
        return meta

    def write(self) -> list[str]:
        out = self.opts.out
        if not out:
            return []
        os.makedirs(out, exist_ok=True)
        paths = [os.path.join(out, f) for f in ("results.csv", "results.json", "table.txt")]
        write_csv(paths[0], self.rows)
        with open(paths[1], "w") as f:
            json.dump({"meta": self.meta(), "columns": COLUMNS, "rows": self.rows, "scaling": self.scaling},
                      f, indent=1)
        with open(paths[2], "w") as f:
            f.write("\n".join(self.lines) + "\n")
        return paths


def copy_reference_s(row: dict) -> float:
    """The copy time a GPU row's graph time is set against (of_copy_graph):
    the faster of the graph-replayed copy and the Python loop's. On an H100
    a graph-captured torch copy_ of 1 GB or more took 22-23 % longer than
    the same copy in a loop (1074 MB: 442.6 against 363.7 µs; 537 MB and
    less: within 2 % either way), which would have flattered every kernel
    set against it."""
    return min(t for t in (row["copy_graph_s"], row["copy_s"]) if t is not None)


def write_csv(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for row in rows:
            w.writerow({k: "" if v is None else v for k, v in row.items()})
