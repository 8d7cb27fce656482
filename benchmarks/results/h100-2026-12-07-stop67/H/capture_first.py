"""A softmax call that takes the shared kernel on clusters, first made
inside a CUDA graph capture in a fresh process (its launcher's one-time
occupancy query then runs during capture), replayed and compared with the
same call made eagerly afterwards, bit for bit."""
import torch

import hetkern

for dtype, shape in ((torch.float32, (140, 90000)), (torch.bfloat16, (70, 160000))):
    x = torch.randn(shape, device="cuda").to(dtype)
    out = torch.empty_like(x)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            hetkern.softmax(x, out=out)
    graph.replay()
    torch.cuda.synchronize()
    eager = hetkern.softmax(x)
    assert torch.equal(out, eager), f"{dtype} {shape}: replay and eager differ"
    ref = torch.softmax(x.double(), -1).to(dtype)
    print(f"{dtype} {shape}: replay == eager; max |out - torch| {(out.double() - ref.double()).abs().max().item():.3g}")
print("capture_first: ok")
