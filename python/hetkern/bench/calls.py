"""Call cost of one op through each way in: the direct Python call, the torch
custom op, and torch's own op (issue 10, item 2).

    python -m hetkern.bench.calls [--device cuda] [--rows 1] [--hidden 4096] [--dtype bfloat16]

At decode shapes (1 x 4096) a call is host-bound: the time per call of a
loop of calls followed by one synchronize is the host time of a call. Rows:

    hetkern.rmsnorm(x, w, out=o)       the direct call, vLLM's way (out given)
    hetkern.rmsnorm(x, w)              the direct call, allocating
    torch.ops.hetkern.rmsnorm(x, w, eps)   the torch custom op (dispatcher,
                                       allocation, the same export); once more
                                       outside inference mode (+ its autograd kernel)
    F.rms_norm(x, (H,), w, eps)        torch's own

Each figure is the median of --repeat runs of --number calls, in us, with
the ratio to F.rms_norm; all but the grad-mode row under
torch.inference_mode(), as vLLM runs.
"""

from __future__ import annotations

import argparse
import statistics
import time


def measure(fn, number: int, repeat: int, sync) -> float:
    """Median seconds per call of `fn` over `repeat` runs of `number` calls."""
    for _ in range(max(10, number // 10)):
        fn()
    sync()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)


def run(device: str = "cuda", rows: int = 1, hidden: int = 4096, dtype: str = "bfloat16",
        number: int = 2000, repeat: int = 9) -> list[tuple[str, float]]:
    import torch
    import torch.nn.functional as F

    import hetkern

    dt = getattr(torch, dtype)
    x = torch.randn(rows, hidden, device=device, dtype=dt)
    w = torch.randn(hidden, device=device, dtype=dt)
    o = torch.empty_like(x)
    eps = 1e-6
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    ops = torch.ops.hetkern
    calls = [
        ("hetkern.rmsnorm(x, w, out=o)", lambda: hetkern.rmsnorm(x, w, eps, out=o)),
        ("hetkern.rmsnorm(x, w)", lambda: hetkern.rmsnorm(x, w, eps)),
        ("torch.ops.hetkern.rmsnorm(x, w, eps)", lambda: ops.rmsnorm(x, w, eps)),
        ("F.rms_norm(x, (H,), w, eps)", lambda: F.rms_norm(x, (hidden,), w, eps)),
    ]
    expected = F.rms_norm(x.float(), (hidden,), w.float(), eps)
    for label, fn in calls[:3]:  # the three ways in compute the same thing
        torch.testing.assert_close(fn().float(), expected, atol=0.05, rtol=0.02, msg=label)
    with torch.inference_mode():  # as vLLM runs: the autograd kernel is skipped
        results = [(label, measure(fn, number, repeat, sync)) for label, fn in calls]
    # Outside inference mode the custom op also passes its autograd kernel.
    results.insert(3, ("torch.ops.hetkern.rmsnorm(x, w, eps), grad mode",
                       measure(calls[2][1], number, repeat, sync)))
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m hetkern.bench.calls", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--rows", type=int, default=1)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=9)
    a = p.parse_args(argv)
    results = run(a.device, a.rows, a.hidden, a.dtype, a.number, a.repeat)
    torch_time = dict(results)["F.rms_norm(x, (H,), w, eps)"]
    print(f"rmsnorm {a.rows}x{a.hidden} {a.dtype} on {a.device}: time per call "
          f"({a.number} calls, then one synchronize; median of {a.repeat})\n")
    print("| call | us | x F.rms_norm |\n| --- | ---: | ---: |")
    for label, seconds in results:
        print(f"| `{label}` | {seconds * 1e6:.2f} | {seconds / torch_time:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
