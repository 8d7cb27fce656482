"""Many Python threads calling ops at once (CPU), ops on several CUDA streams
at once, and ops captured in a CUDA graph and replayed."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from conftest import requires_cuda
from opinfo import OPS
from test_opinfo import _compare


def _sample(op, device, seed, shape=None):
    shape = shape or next(s for s in reversed(op.shapes) if 0 < len(s) and s[-1] < 65536)
    gen = torch.Generator().manual_seed(seed)
    inputs = op.make_inputs(shape, torch.float32, device, gen)
    return inputs, op.reference([t.clone() for t in inputs])


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_many_threads_cpu(op):
    samples = [_sample(op, "cpu", seed) for seed in range(16)]

    def work(i):
        inputs, expected = samples[i % len(samples)]
        for _ in range(20):
            _compare(op, torch.float32, op.call([t.clone() for t in inputs], None), expected)
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(work, range(64)))


@requires_cuda
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_several_streams_cuda(op):
    streams = [torch.cuda.Stream() for _ in range(4)]
    samples = [_sample(op, "cuda", seed) for seed in range(len(streams))]
    results = []
    torch.cuda.synchronize()
    for stream, (inputs, _) in zip(streams, samples):
        with torch.cuda.stream(stream):
            torch.cuda._sleep(1_000_000)  # keep the streams busy at the same time
            results.append(op.call([t.clone() for t in inputs], None))
    torch.cuda.synchronize()
    for (_, expected), result in zip(samples, results):
        _compare(op, torch.float32, result, expected)


@requires_cuda
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_cuda_graph_replay(op):
    inputs, _ = _sample(op, "cuda", 0)
    static_inputs = [t.clone() for t in inputs]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        op.call([t for t in static_inputs], None)  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        result = op.call([t for t in static_inputs], None)
    new_inputs, expected = _sample(op, "cuda", 1)
    for dst, src in zip(static_inputs, new_inputs):
        dst.copy_(src)
    graph.replay()
    torch.cuda.synchronize()
    _compare(op, torch.float32, result, expected)
