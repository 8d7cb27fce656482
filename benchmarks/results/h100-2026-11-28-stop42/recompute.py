"""Recomputes of_copy_graph in a results.json written before 2026-11-28's
last bench change (runs 1 and 3 of this folder), as the bench now does
(runner.copy_reference_s: the faster of the graph-replayed copy and the
loop's), and prints the report of the result.

    python recompute.py run3-bf16-peers.tar > run3-bf16-peers-SUMMARY-recomputed.md
"""
import io
import json
import sys
import tarfile

from hetkern.bench.plot import load_rows  # noqa: F401  (the report's loader reads files)
from hetkern.bench.report import report
from hetkern.bench.runner import copy_reference_s

with tarfile.open(sys.argv[1]) as tar:
    data = json.load(io.TextIOWrapper(tar.extractfile("./results.json")))
for row in data["rows"]:
    if row.get("hetkern_graph_s") and row.get("copy_graph_s"):
        row["of_copy_graph"] = copy_reference_s(row) / row["hetkern_graph_s"]
sys.stdout.write(report(data["rows"], [data["meta"]]) + "\n")
