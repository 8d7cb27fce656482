"""Timing helpers shared by the benchmarks.

CPU: each sample times a batch of calls with perf_counter (batch sized so a
sample lasts >= ~2 ms), after warm-up; the median over samples is reported
with the spread (min..max). GPU: CUDA events around a batch on the current
stream, after warm-up; median over samples. GB/s counts bytes read + written.
"""

from __future__ import annotations

import csv
import statistics
import time
from dataclasses import dataclass
from typing import Callable


@dataclass
class Timing:
    median_s: float
    min_s: float
    max_s: float

    def gbps(self, nbytes: int) -> float:
        return nbytes / self.median_s / 1e9


def time_cpu(fn: Callable[[], object], samples: int = 15, min_sample_s: float = 2e-3) -> Timing:
    fn()  # warm-up (page faults, caches, lazy init)
    batch, elapsed = 1, 0.0
    while True:
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_sample_s or batch >= 1 << 20:
            break
        batch *= 2
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - start) / batch)
    return Timing(statistics.median(times), min(times), max(times))


def time_cuda(fn: Callable[[], object], samples: int = 15, min_sample_s: float = 2e-3) -> Timing:
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    batch = 1
    while True:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        elapsed = start.elapsed_time(end) / 1e3
        if elapsed >= min_sample_s or batch >= 1 << 16:
            break
        batch *= 2
    times = []
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / batch)
    return Timing(statistics.median(times), min(times), max(times))


def size_label(n: int) -> str:
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def parse_size(text: str) -> int:
    """'64M' -> 67108864; plain integers pass through."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def sizes_up_to(limit: int, first_log2: int = 10, step_log2: int = 2) -> list[int]:
    """Powers of two from 2**first_log2 in steps of 2**step_log2, up to `limit`."""
    return [1 << p for p in range(first_log2, 40, step_log2) if (1 << p) <= limit]


def write_csv(path: str | None, rows: list[dict]) -> None:
    """All rows to `path` (columns: the union of the rows' keys); no-op for None."""
    if not path:
        return
    keys = sorted({k for r in rows for k in r})
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def gpu_available() -> bool:
    """A CUDA GPU that torch sees and a CUDA build of hetkern."""
    try:
        import torch
    except ImportError:
        return False
    import hetkern

    return torch.cuda.is_available() and hetkern.built_with_cuda()
