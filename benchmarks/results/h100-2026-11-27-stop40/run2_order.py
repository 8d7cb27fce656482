"""Stop 40: does a contender's graph time depend on what ran before it?
For each case: graph times in a fixed sequence that puts every contender
after each other one, eager (time_cuda) times, and graph times with four
buffer sets used in turn (no reuse of one call's data by the next in L2)."""
import subprocess, sys, time
import torch
sys.path.insert(0, sys.argv[1])
import graph_probe
from hetkern.bench import harness

def g(fn):
    return harness.time_cuda_graph(fn, samples=9, max_total_s=1.0).median_s * 1e6

for spec in sys.argv[2].split(","):
    op, shape = spec.split(":")
    rows, cols = map(int, shape.split("x"))
    fns = graph_probe.contenders(op, rows, cols, "bfloat16")
    src = fns.pop("compile", None)
    if src is not None:
        fn, args = src
        compiled = torch.compile(fn)
        compiled(*args)
        fns["compile"] = lambda: compiled(*args)
    fns.pop("numpy", None)
    names = [n for n in ("hetkern", "liger", "flashinfer", "compile", "torch") if n in fns]
    seq = ["hetkern", "liger", "compile", "liger", "hetkern", "compile", "hetkern", "flashinfer",
           "hetkern", "liger", "torch", "liger", "hetkern"]
    out = []
    for n in seq:
        if n in fns:
            out.append(f"{n}={g(fns[n]):.2f}")
    print(f"{op} {shape} graph in sequence: " + " ".join(out), flush=True)
    eager = {n: harness.time_cuda(fns[n], samples=9, max_total_s=1.0).median_s * 1e6 for n in ("hetkern", "liger", "flashinfer") if n in fns}
    print(f"{op} {shape} eager: " + " ".join(f"{k}={v:.2f}" for k, v in eager.items()), flush=True)
    host = {n: harness.time_cuda_host(fns[n], samples=9, max_total_s=1.0).median_s * 1e6 for n in ("hetkern", "liger") if n in fns}
    print(f"{op} {shape} host wall: " + " ".join(f"{k}={v:.2f}" for k, v in host.items()), flush=True)
    sets = [graph_probe.contenders(op, rows, cols, "bfloat16") for _ in range(4)]
    cold = []
    for n in ("hetkern", "liger", "flashinfer", "hetkern", "liger"):
        if n not in fns:
            continue
        calls = [s[n] for s in sets]
        turn = [0]
        def rotate(calls=calls, turn=turn):
            turn[0] = (turn[0] + 1) % len(calls)
            return calls[turn[0]]()
        cold.append(f"{n}={g(rotate):.2f}")
    print(f"{op} {shape} graph, 4 buffer sets in turn: " + " ".join(cold), flush=True)
    del fns, sets
    torch.cuda.empty_cache()
