"""hetkern's benchmarks: every op against NumPy, torch eager and torch.compile.

    python -m hetkern.bench [--device cpu|cuda|all] [--family ...] [--quick] [--out DIR]
    python -m hetkern.bench.plot results.json --out DIR
    python -m hetkern.bench.report results.json [...] > SUMMARY.md

This package file stays import-light (no torch, no libhetkern): plot and
report run on machines that only have the JSON.
"""

FAMILIES = ("elementwise", "activation", "reduce", "norm", "softmax", "rope")
