"""Sustained graph replay of one case per contender, with the GPU's SM clock
and board power sampled by nvidia-smi while it runs: whether two kernels that
take the same time at the profiler's locked clocks differ at boost clocks
because one draws more power (and is clocked down for it).

    python benchmarks/clock_probe.py --op softmax --shape 4096x32000 [--seconds 3] [--rounds 2]

Each contender (hetkern, the peers of graph_probe.py, a copy of the same
bytes where the case has one) replays a CUDA graph of 20 calls for --seconds,
in turn, --rounds times (so drift in temperature shows as a difference between
rounds, not between contenders). Per run: µs per call over the whole window,
and the median SM clock (MHz), board power (W) and temperature (C) of the
samples taken in it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

import torch

import graph_probe
from hetkern.bench import harness

QUERY = "clocks.sm,power.draw,temperature.gpu"


def sustained(fn, seconds: float, calls: int = 20):
    """(µs per call, [(clock, power, temperature)...]) over `seconds` of replay."""
    graph = torch.cuda.CUDAGraph()
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
                            "-lms", "50", "-i", str(torch.cuda.current_device())],
                           stdout=subprocess.PIPE, text=True)
    start = time.perf_counter()
    replays = 0
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            graph.replay()
        replays += 20
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    smi.terminate()
    out, _ = smi.communicate()
    samples = []
    for line in out.splitlines()[2:]:  # the first samples may predate the replay
        try:
            samples.append(tuple(float(v) for v in line.split(",")))
        except ValueError:
            continue
    return elapsed / (replays * calls) * 1e6, samples


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--op", default="softmax")
    p.add_argument("--shape", default="4096x32000")
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    rows, cols = (int(v) for v in args.shape.split("x"))
    fns = graph_probe.contenders(args.op, rows, cols, args.dtype)
    fns = {k: v for k, v in fns.items() if callable(v) and k != "numpy"}
    nbytes = graph_probe.moved_bytes(args.op, rows, cols, args.dtype)
    if nbytes is not None:
        fns["copy"] = harness.copy_fn("cuda", nbytes)
    print(f"{args.op} {args.dtype} {args.shape}: {args.seconds:g} s of replay each, "
          f"{torch.cuda.get_device_name()}")
    for round_ in range(args.rounds):
        for name, fn in fns.items():
            us, samples = sustained(fn, args.seconds)
            if samples:
                clock, power, temp = (statistics.median(s[i] for s in samples) for i in range(3))
                sampled = f"sm {clock:6.0f} MHz  {power:6.1f} W  {temp:4.0f} C  ({len(samples)} samples)"
            else:
                sampled = "no nvidia-smi samples"
            print(f"round {round_}  {name:<10} {us:9.2f} us/call  {sampled}", flush=True)


if __name__ == "__main__":
    main()
