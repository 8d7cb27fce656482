"""python -m hetkern.bench end to end on the CPU (--quick, a few ops): the
files and their documented columns, the arithmetic behind every derived
column, the time cap, the summary report and the plots. Timings themselves
are never asserted."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hetkern.bench.runner import COLUMNS, PEERS

ROOT = Path(__file__).resolve().parent.parent


def bench(*args, env=None, timeout=120) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "hetkern.bench", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    done = bench("--device", "cpu", "--quick", "--threads", "1", "--cpu-max", "64K",
                 "--family", "elementwise,reduce,norm", "--ops", "scale,scale_alloc,add,sum,dot_rows,rmsnorm",
                 "--out", str(out))
    with open(out / "results.json") as f:
        data = json.load(f)
    with open(out / "results.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    return out, done.stdout, data, csv_rows


def test_files_have_the_documented_columns(results):
    out, _, data, csv_rows = results
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    undocumented = [c for c in COLUMNS if f"`{c}`" not in readme]
    assert not undocumented, f"columns missing from benchmarks/README.md: {undocumented}"
    assert data["columns"] == COLUMNS
    assert list(csv_rows[0]) == COLUMNS
    assert all(list(row) == COLUMNS for row in data["rows"])
    assert len(csv_rows) == len(data["rows"])
    meta = data["meta"]
    assert meta["cpu_threads"] == 1 and meta["numpy_threads"] == 1 and meta["cpu_llc_bytes"] >= 0
    assert "omp_wait_policy" in meta  # the environment's policy (None: libgomp's default)
    assert (out / "table.txt").read_text().strip()


def test_sweep_covers_ops_dtypes_and_sizes(results):
    _, stdout, data, _ = results
    got = {(r["op"], r["dtype"], r["shape"]) for r in data["rows"]}
    for dtype in ("float32", "bfloat16"):
        for n in ("1K", "64K"):
            assert ("scale", dtype, n) in got and ("sum", dtype, n) in got and ("dot_rows", dtype, n) in got
        assert ("scale_alloc", dtype, "4K") in got
        assert ("rmsnorm", dtype, "32x1024") in got
    assert not any(r["size"] > 64 << 10 for r in data["rows"])  # --cpu-max
    assert "hetkern" in stdout and "x numpy" in stdout and "wrote" in stdout


def test_derived_columns(results):
    _, _, data, csv_rows = results
    for row, csv_row in zip(data["rows"], csv_rows):
        assert row["device"] == "cpu" and row["threads"] == 1
        assert row["hetkern_min_s"] <= row["hetkern_s"] <= row["hetkern_max_s"]
        assert math.isclose(row["hetkern_gbps"], row["bytes"] / row["hetkern_s"] / 1e9, rel_tol=1e-9)
        assert math.isclose(row["copy_gbps"], row["bytes"] / row["copy_s"] / 1e9, rel_tol=1e-9)
        assert math.isclose(row["of_copy"], row["copy_s"] / row["hetkern_s"], rel_tol=1e-9)
        assert row["compile_s"] is None  # torch.compile is a GPU peer only
        for p in PEERS:
            if row[f"{p}_s"] is None:
                assert row[f"x_{p}"] is None and row[f"{p}_gbps"] is None
            else:
                assert math.isclose(row[f"x_{p}"], row[f"{p}_s"] / row["hetkern_s"], rel_tol=1e-9)
                assert math.isclose(row[f"{p}_gbps"], row["bytes"] / row[f"{p}_s"] / 1e9, rel_tol=1e-9)
        # NumPy is a peer exactly where it has the op and the dtype.
        assert (row["numpy_s"] is not None) == (row["dtype"] == "float32" and row["op"] != "rmsnorm")
        assert row["torch_s"] is not None
        assert (row["tokens"] is not None) == (row["op"] == "rmsnorm")
        assert float(csv_row["hetkern_s"]) == row["hetkern_s"]
        assert csv_row["compile_s"] == ""
    by_key = {(r["op"], r["dtype"], r["shape"]): r for r in data["rows"]}
    assert by_key[("scale", "float32", "64K")]["bytes"] == 2 * 4 * (64 << 10)
    assert by_key[("dot_rows", "bfloat16", "1K")]["bytes"] == (2 * 1024 + 1) * 2
    assert by_key[("rmsnorm", "float32", "32x1024")]["tokens"] == 32


def test_report_table(results):
    out, _, _, _ = results
    done = subprocess.run([sys.executable, "-m", "hetkern.bench.report", str(out / "results.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    line = next(l for l in text.splitlines() if l.startswith("| cpu | elementwise | scale | float32 |"))
    assert re.search(r"\d\.\d\d [✔✘] \(≥0\.85\)", line)  # of copy, against its target
    assert "| cpu | reduce | sum | float32 |" in text and "| cpu | norm | rmsnorm | bfloat16 |" in text
    assert "## Small CPU calls" in text and "| scale_alloc | float32 | 4K |" in text


def test_time_cap_stops_the_sweep_and_says_so(tmp_path):
    done = bench("--device", "cpu", "--quick", "--threads", "1", "--family", "elementwise",
                 "--ops", "scale,add", "--dtypes", "float32", "--time-cap", "0.001", "--out", str(tmp_path),
                 env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"))  # recorded as set
    data = json.loads((tmp_path / "results.json").read_text())
    # The first series runs its largest size only; the family is over its cap
    # before the second starts.
    assert [(r["op"], r["shape"]) for r in data["rows"]] == [("scale", "1M")]
    assert data["meta"]["omp_wait_policy"] == "PASSIVE"
    assert "time cap" in done.stdout
    notes = data["meta"]["notes"]
    assert "time cap 0.001 s (cpu/elementwise): skipped scale float32 at 64K, 1K" in notes
    assert "time cap 0.001 s (cpu/elementwise): skipped add float32 at 1M, 64K, 1K" in notes


def test_thread_sweep_times_the_largest_shape_at_each_count(tmp_path):
    done = bench("--device", "cpu", "--quick", "--threads", "1", "--family", "elementwise,norm",
                 "--ops", "scale,rmsnorm", "--dtypes", "bfloat16", "--cpu-max", "64K",
                 "--thread-sweep", "1,2", "--out", str(tmp_path))
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["meta"]["cpu_thread_sweep"] == [1, 2]
    assert {r["threads"] for r in data["rows"]} == {1}  # the main table stays at --threads
    largest = {}
    for r in data["rows"]:
        if r["size"] > largest.get(r["op"], {"size": -1})["size"]:
            largest[r["op"]] = r
    swept = sorted((r["op"], r["shape"], r["threads"]) for r in data["scaling"])
    assert swept == sorted((op, r["shape"], n) for op, r in largest.items() for n in (1, 2))
    for r in data["scaling"]:
        assert list(r) == COLUMNS and r["x_torch"] is not None
        assert math.isclose(r["of_copy"], r["copy_s"] / r["hetkern_s"], rel_tol=1e-9)
    assert "thread scaling" in done.stdout and "scale" in done.stdout.split("thread scaling")[1]


def test_thread_counts_double_up_to_all_cores():
    from hetkern.bench.harness import thread_counts

    assert thread_counts(1) == [1] and thread_counts(2) == [1, 2]
    assert thread_counts(16) == [1, 2, 4, 8, 16] and thread_counts(12) == [1, 2, 4, 8, 12]


def test_bad_thread_sweep_is_refused():
    done = subprocess.run([sys.executable, "-m", "hetkern.bench", "--device", "cpu", "--thread-sweep", "0,2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "--thread-sweep" in done.stderr


def test_plots_from_json(results, tmp_path):
    pytest.importorskip("matplotlib")
    out, _, data, _ = results
    done = subprocess.run([sys.executable, "-m", "hetkern.bench.plot", str(out / "results.json"),
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = {f"gbps-cpu-{f}-{d}.png" for f in ("elementwise", "reduce", "norm") for d in ("float32", "bfloat16")}
    assert {p.name for p in tmp_path.iterdir()} == expected
    assert all((tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in expected)


def test_plot_without_matplotlib_says_how_to_get_it(results, tmp_path):
    out, _, _, _ = results
    code = ("import sys; sys.modules['matplotlib'] = None; from hetkern.bench.plot import main; "
            f"sys.exit(main([{str(out / 'results.json')!r}, '--out', {str(tmp_path)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "pip install matplotlib" in done.stderr


def test_meson_installs_every_bench_module():
    build = (ROOT / "python" / "hetkern" / "meson.build").read_text()
    modules = sorted(p.name for p in (ROOT / "python" / "hetkern" / "bench").glob("*.py"))
    assert modules and all(f"'bench/{m}'" in build for m in modules)


def test_table_line_of_a_gpu_row_without_torch_host_time():
    """A large CUDA row has hetkern's whole-call time but no torch one (only
    decode rows time torch's call): the line says '-' instead of failing."""
    from hetkern.bench.runner import table_line
    row = dict.fromkeys(COLUMNS)
    row.update(device="cuda", op="scale", dtype="float32", shape="64M", hetkern_s=1e-4, hetkern_min_s=1e-4,
               hetkern_max_s=1.1e-4, hetkern_gbps=2.5e3, of_copy=0.98, copy_gbps=2.6e3,
               hetkern_graph_s=0.9e-4, hetkern_host_s=1.2e-4)
    line = table_line(row)
    assert "host 120.0us/- = -" in line and "graph:" in line


@pytest.mark.skipif(not (importlib.util.find_spec("torch") and __import__("torch").cuda.is_available()),
                    reason="needs a CUDA device")
def test_cuda_sweep_has_graph_and_host_times(tmp_path):
    """The CUDA side end to end: decode and large rows, graph-replayed device
    times for hetkern, the host-time columns where they apply."""
    bench("--device", "cuda", "--quick", "--family", "norm,elementwise", "--ops", "rmsnorm,scale",
          "--dtypes", "bfloat16", "--gpu-max", "1M", "--out", str(tmp_path), timeout=600)
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert {r["op"] for r in rows} == {"rmsnorm", "scale"}
    assert all(r["device"] == "cuda" and r["hetkern_graph_s"] > 0 and r["hetkern_host_s"] > 0 for r in rows)
    decode = [r for r in rows if r["tokens"] is not None and r["family"] == "norm"]
    assert decode and all(r["host_of_torch"] == pytest.approx(r["hetkern_host_s"] / r["torch_host_s"])
                          for r in decode if r["torch_host_s"])
    assert "## GPU device time under CUDA graph replay" in subprocess.run(
        [sys.executable, "-m", "hetkern.bench.report", str(tmp_path / "results.json")],
        capture_output=True, text=True, check=True).stdout


def test_in_turn_calls_each_set_once_per_round():
    from hetkern.bench.harness import in_turn
    seen = []
    call = in_turn([lambda i=i: seen.append(i) for i in range(3)])
    for _ in range(7):
        call()
    assert seen == [0, 1, 2, 0, 1, 2, 0]
    only = lambda: None  # noqa: E731
    assert in_turn([only]) is only


def test_in_turn_holds_each_sets_result_until_its_next_turn():
    """An allocating contender's output stays alive while the other sets run
    (one buffer a set, as hetkern's preallocated outputs), and is released
    just before its own set runs again."""
    import weakref

    from hetkern.bench.harness import in_turn

    class Output:
        pass

    made = []

    def allocating(i):
        def call():
            assert all(ref() is None for j, ref in made if j == i)  # the set's last one is gone
            out = Output()
            made.append((i, weakref.ref(out)))
            return out
        return call

    call = in_turn([allocating(i) for i in range(3)])
    for _ in range(7):
        call()
    alive = sorted(j for j, ref in made if ref() is not None)
    assert alive == [0, 1, 2] and len(made) == 7


def _graph_runner(monkeypatch, llc_bytes):
    """A Runner whose graph timer calls each function GRAPH_CALLS times (as a
    captured graph would) and reports a fixed time, and whose copies record
    their calls, so that measure_graphs runs without a GPU."""
    from hetkern.bench import harness, runner

    calls = []

    def fake_graph(fn, samples=15, min_sample_s=2e-3, max_total_s=1.0, calls_=harness.GRAPH_CALLS):
        for _ in range(calls_):
            fn()
        return harness.Timing(1e-5, 1e-5, 1e-5, 1)

    monkeypatch.setattr(harness, "time_cuda_graph", fake_graph)
    monkeypatch.setattr(harness, "copy_fn", lambda device, nbytes: lambda: calls.append(("copy", nbytes)))
    opts = runner.Options(devices=["cuda"], ops=None, dtypes=["float32"], cpu_max=0, gpu_max=0, threads=1,
                          quick=True, time_caps={}, out=None)
    r = runner.Runner(opts)
    r.llc = {"cuda": llc_bytes}
    r.progress = runner.Progress(total=0, tty=False)
    return r, calls


@pytest.mark.parametrize("fits", [True, False])
def test_graph_times_of_a_case_larger_than_l2_take_input_sets_in_turn(monkeypatch, fits):
    """measure_graphs: a case that does not fit L2 gets GRAPH_SETS fresh sets of
    arrays (case.setup again), every contender cycling through them; one
    that fits keeps its one set."""
    from hetkern.bench import harness
    from hetkern.bench.cases import Case
    from hetkern.bench.runner import COLUMNS

    made = []

    def setup(device):
        n = len(made)
        made.append(n)
        return {"hetkern": lambda: calls.append(("hetkern", n)), "torch": lambda: calls.append(("torch", n))}

    case = Case("norm", "rmsnorm", "float32", (1024, 1024), 8 << 20, setup, rows=True)
    r, calls = _graph_runner(monkeypatch, llc_bytes=(16 << 20) if fits else (1 << 20))
    row = dict.fromkeys(COLUMNS)
    row.update(fits_llc=fits)
    first = setup("cuda")
    r.measure_graphs(case, row, {"hetkern": first["hetkern"], "torch": first["torch"]}, use_compile=False)
    sets = 1 if fits else harness.GRAPH_SETS
    assert row["graph_sets"] == sets and len(made) == sets
    for name in ("hetkern", "torch"):
        used = [n for who, n in calls if who == name]
        assert len(used) == harness.GRAPH_CALLS and set(used) == set(range(sets))
    # The copy: one set, and where the case has several, that many too.
    assert sum(who == "copy" for who, _ in calls) == harness.GRAPH_CALLS * (1 if fits else 2)
    assert row["of_copy_graph"] == pytest.approx(row["copy_graph_s"] / row["hetkern_graph_s"])
    # Against the loop's copy where that was faster.
    row.update(copy_s=row["copy_graph_s"] / 2)
    r.measure_graphs(case, row, {"hetkern": first["hetkern"], "torch": first["torch"]}, use_compile=False)
    assert row["of_copy_graph"] == pytest.approx(row["copy_s"] / row["hetkern_graph_s"])
    assert row["best_graph_peer"] == "torch" and row["x_best_graph"] == pytest.approx(1.0)


def test_report_judges_every_large_gpu_row_against_copy_and_peers():
    """The graph table marks a large row under 0.93 of a copy (graph time) or
    under 0.97 of the best peer as a miss, and counts it."""
    from hetkern.bench.report import report
    from hetkern.bench.runner import COLUMNS

    def row(shape, of_copy, x_best):
        r = dict.fromkeys(COLUMNS)
        r.update(device="cuda", family="norm", op="layernorm_quant", dtype="bfloat16", shape=shape,
                 size=64 << 20, tokens=4096, bytes=3 * (64 << 20), fits_llc=False, of_copy=0.9,
                 hetkern_graph_s=1e-4, flashinfer_graph_s=x_best * 1e-4, best_graph_peer="flashinfer",
                 x_best_graph=x_best, of_copy_graph=of_copy, graph_sets=4, hetkern_host_s=1e-4)
        return r

    text = report([row("4096x16384", 0.92, 2.0), row("16384x4096", 0.95, 0.96)], [{}])
    lines = {l.split(" | ")[2]: l for l in text.splitlines() if l.startswith("| layernorm_quant |")}
    assert "0.92 ✘ (≥0.93)" in lines["4096x16384"] and "2.00 ✔ (≥0.97)" in lines["4096x16384"]
    assert "0.95 ✔ (≥0.93)" in lines["16384x4096"] and "0.96 ✘ (≥0.97)" in lines["16384x4096"]
    assert "2 graph-time figure(s) miss their target." in text


def test_report_holds_softmax_vocabulary_rows_to_the_best_peer():
    """Issue 11's softmax target: rows of 32000-256K values (1-4096 of them)
    at least as fast as the best peer; longer rows carry no target."""
    from hetkern.bench.report import report
    from hetkern.bench.runner import COLUMNS

    def row(tokens, cols, x_best):
        r = dict.fromkeys(COLUMNS)
        r.update(device="cuda", family="softmax", op="softmax", dtype="bfloat16", shape=f"{tokens}x{cols}",
                 size=tokens * cols, tokens=tokens, bytes=4 * tokens * cols, fits_llc=True, of_copy=0.5,
                 hetkern_graph_s=1e-5, liger_graph_s=x_best * 1e-5, best_graph_peer="liger",
                 x_best_graph=x_best, graph_sets=1)
        return r

    text = report([row(32, 32000, 0.94), row(256, 151936, 1.2), row(1, 1 << 20, 0.89)], [{}])
    lines = {l.split(" | ")[2]: l for l in text.splitlines() if l.startswith("| softmax |")}
    assert "0.94 ✘ (≥1)" in lines["32x32000"] and "1.20 ✔ (≥1)" in lines["256x151936"]
    assert "0.89 (liger)" in lines["1x1048576"]
    assert "1 graph-time figure(s) miss their target." in text


def test_graph_timer_warms_up_before_sampling(monkeypatch):
    """The graph timer replays untimed for GPU_WARMUP_S (and at least
    min_runs times) before its first sample, the same for every contender
    (harness.py says why); torch.cuda is faked, so this runs without a GPU."""
    import time

    import torch

    from hetkern.bench import harness

    log = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: log.append(("sync", time.perf_counter())))
    monkeypatch.setattr(harness, "GPU_WARMUP_S", 0.03)
    start = time.perf_counter()
    harness._warm_up_cuda(lambda: log.append(("run", time.perf_counter())))
    assert time.perf_counter() - start >= 0.03  # it returns once the warm-up time has passed
    assert sum(what == "run" for what, _ in log) >= 3
    assert [what for what, _ in log[:2]] == ["run", "sync"]  # each run completes before the next
    log.clear()
    monkeypatch.setattr(harness, "GPU_WARMUP_S", 0.0)
    harness._warm_up_cuda(lambda: log.append(("run", 0.0)), min_runs=5)
    assert [what for what, _ in log].count("run") == 5

    # time_cuda_graph: capture, the warm-up on the graph's replays, then samples.
    order = []

    class FakeGraph:
        def replay(self):
            order.append("replay")

    class FakeContext:
        def __init__(self, *args):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(torch.cuda, "Stream", lambda: type("S", (), {"wait_stream": lambda self, s: None})())
    monkeypatch.setattr(torch.cuda, "current_stream", lambda: type("S", (), {"wait_stream": lambda self, s: None})())
    monkeypatch.setattr(torch.cuda, "stream", FakeContext)
    monkeypatch.setattr(torch.cuda, "graph", FakeContext)
    monkeypatch.setattr(torch.cuda, "CUDAGraph", FakeGraph)
    monkeypatch.setattr(harness, "_warm_up_cuda", lambda run, min_runs=3: order.append(("warm-up", run)))
    monkeypatch.setattr(harness, "_measure", lambda *a: order.append("sample") or harness.Timing(1, 1, 1, 1))
    harness.time_cuda_graph(lambda: None)
    assert [o[0] if isinstance(o, tuple) else o for o in order] == ["warm-up", "sample"]
    assert order[0][1].__self__.__class__ is FakeGraph  # the graph's replays are warmed, not the bare call
