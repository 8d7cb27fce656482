"""Which OpenMP runtimes a process holds with torch and hetkern loaded, and
whether hetkern's 16-thread CPU call slows down when torch's OpenMP calls
run in between (the bench alternates them). log_softmax float32 16384x1024
took 5.99 ms in run-cpu.sh's main table and 1.33 ms in its thread sweep."""
import time

import torch

import hetkern

print("OpenMP runtimes mapped:",
      sorted({line.split()[-1] for line in open("/proc/self/maps") if "gomp" in line or "libiomp" in line}))
threads = torch.get_num_threads()
hetkern.set_num_threads(threads)
x = torch.randn(16384, 1024)
o = torch.empty_like(x)


def best_ms(fn, reps=20, rounds=5):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - start) / reps * 1e3)
    return min(times), sorted(times)[len(times) // 2]


def hetkern_call():
    hetkern.log_softmax(x, out=o)


def torch_call():
    torch.log_softmax(x, -1)


print(f"threads {threads}")
print("hetkern alone (best, median ms): %.3f %.3f" % best_ms(hetkern_call))
print("torch alone: %.3f %.3f" % best_ms(torch_call))
print("torch then hetkern, per pair: %.3f %.3f" % best_ms(lambda: (torch_call(), hetkern_call())))
print("hetkern then torch, per pair: %.3f %.3f" % best_ms(lambda: (hetkern_call(), torch_call())))
print("hetkern alone again: %.3f %.3f" % best_ms(hetkern_call))
