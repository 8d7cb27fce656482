#!/usr/bin/env python3
"""`python benchmarks/run.py [options]` is `python -m hetkern.bench [options]`
with --out defaulting to benchmarks/out (git-ignored). With HETKERN_LIBRARY
set (a build tree's libhetkern.so) it runs this tree's python/hetkern, else
the installed package. Options: python -m hetkern.bench --help; README.md here."""

import os
import runpy
import sys

here = os.path.dirname(os.path.abspath(__file__))
if os.environ.get("HETKERN_LIBRARY"):
    tree = os.path.join(os.path.dirname(here), "python")
    sys.path.insert(0, tree)
    # The bench may re-exec itself (OMP_WAIT_POLICY): keep the tree on the path.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")]))
if not any(a == "--out" or a.startswith("--out=") for a in sys.argv[1:]):
    sys.argv += ["--out", os.path.join(here, "out")]
runpy.run_module("hetkern.bench", run_name="__main__", alter_sys=True)
