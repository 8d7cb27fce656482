"""torch.ops.hetkern (issue 10, item 2): opcheck for every op x dtype,
torch.compile(fullgraph=True) of a transformer block with no graph break
equal to eager (CPU; CUDA with and without CUDA graphs), and gradients
refused clearly."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.library import opcheck

import hetkern
from conftest import DTYPES, HAVE_CUDA, assert_bitwise_equal, requires_cuda
from hetkern._registry import OPS
from registry_samples import HEAD, MAX_POSITION, rope_cache, sample_args

ops = torch.ops.hetkern


def _overloads():
    for op in OPS:
        for overload in getattr(ops, op.name).overloads():
            yield op, overload


def _opcheck_args(op, overload, dtype, device):
    values = sample_args(op, dtype, device)
    if overload == "Scalar":
        values = {k: (0.75 if op.arg(k).kind == "array or number" else v) for k, v in values.items()}
    if op.name == "rope" and dtype != torch.float32:
        values["cos_sin_cache"] = rope_cache(dtype, device)
    return tuple(values.values())


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("op,overload", list(_overloads()), ids=lambda v: getattr(v, "name", v))
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_opcheck(op, overload, dtype, device):
    # schema, fake kernel vs real one, autograd registration, AOT dispatch
    opcheck(getattr(getattr(ops, op.name), overload), _opcheck_args(op, overload, dtype, device))


PARAM_OPS = [op for op in OPS if "weight" in {a.name for a in op.args}]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("op", PARAM_OPS, ids=lambda op: op.name)
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_opcheck_float32_parameters(op, dtype, device):
    # The norms' mixed precision: 16-bit x, float32 weight (and bias); the
    # fake kernel's result has x's dtype like the real one's.
    values = sample_args(op, dtype, device, param_dtype=torch.float32)
    opcheck(getattr(ops, op.name).default, tuple(values.values()))
    if not op.in_place:
        assert getattr(ops, op.name)(**values).dtype == dtype


# ---- a transformer block ---------------------------------------------------------
T, HEADS, KV_HEADS = 6, 4, 2
HIDDEN = HEADS * HEAD


def block(x, residual, w_norm, w_out, positions, cache):
    """rmsnorm, add, rope, softmax, silu_and_mul, fused_add_rmsnorm, scale,
    with torch ops in between (as a model's forward would have). The in-place
    ops write intermediates, as in a model: CUDA graphs skip graphs that
    mutate their inputs."""
    residual = residual.clone()
    h = ops.rmsnorm(x, w_norm, 1e-6)
    h = ops.add(h, x)
    q = h.clone()
    k = h[:, : KV_HEADS * HEAD].clone()
    ops.rope(positions, q, k, HEAD, cache, True)
    attn = ops.softmax(q.view(T, HEADS, HEAD))
    gated = ops.silu_and_mul(torch.cat((attn.reshape(T, HIDDEN), h), -1))
    ops.fused_add_rmsnorm(gated, residual, w_out, 1e-6)
    return ops.scale(gated, 0.5), residual, k


def _block_inputs(device, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    def r(*s):
        return torch.randn(s, generator=g).to(dtype).to(device)
    positions = torch.randint(0, MAX_POSITION, (T,), generator=g).to(device)
    return (r(T, HIDDEN), r(T, HIDDEN), r(HIDDEN), r(HIDDEN), positions, rope_cache(dtype, device))


def _clone(args):
    return tuple(a.clone() for a in args)


def _compiled_equals_eager(device, mode=None, calls=1):
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(block, fullgraph=True, mode=mode)
    with torch.no_grad():
        for seed in range(calls):
            inputs = _block_inputs(device, seed=seed)
            expected = block(*_clone(inputs))
            got_inputs = _clone(inputs)
            got = compiled(*got_inputs)
            for a, e in zip(got, expected):
                assert_bitwise_equal(a, e)
            for a, e in zip(got_inputs, inputs):  # inputs untouched
                assert_bitwise_equal(a, e)
    assert not counters["graph_break"], dict(counters["graph_break"])
    return counters


def test_compile_fullgraph_equals_eager_cpu():
    _compiled_equals_eager("cpu")


def test_compiled_graph_holds_the_hetkern_ops():
    import torch._dynamo

    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    with torch.no_grad():
        torch.compile(block, fullgraph=True, backend=backend)(*_block_inputs("cpu"))
    assert len(graphs) == 1
    targets = {str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"}
    for name in ("rmsnorm", "add", "rope", "softmax", "silu_and_mul", "fused_add_rmsnorm", "scale"):
        assert any(f"hetkern.{name}" in t for t in targets), (name, targets)


@requires_cuda
def test_compile_fullgraph_equals_eager_cuda():
    _compiled_equals_eager("cuda")


@requires_cuda
def test_reduce_overhead_cuda_graph_holds_the_hetkern_kernels():
    # CUDA graphs (mode="reduce-overhead") record on the third call or so;
    # replays with new inputs must still equal eager, which they cannot if
    # the graph lost the hetkern kernels, and torch must not warn that the
    # graph is empty or skip it.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counters = _compiled_equals_eager("cuda", mode="reduce-overhead", calls=6)
    assert not [w for w in caught if "empty" in str(w.message).lower()]
    assert not counters["inductor"].get("cudagraph_skips"), dict(counters["inductor"])
    # The same kernels show up inside the graph's replay in the profiler.
    compiled = torch.compile(block, fullgraph=True, mode="reduce-overhead")
    inputs = _block_inputs("cuda")
    with torch.no_grad():
        for _ in range(4):
            compiled(*_clone(inputs))
        torch.cuda.synchronize()
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            compiled(*_clone(inputs))
            torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    print("CUDA kernels in one replay:", sorted(set(names)))
    assert any("hetkern" in n for n in names), names[:20]


# ---- autograd --------------------------------------------------------------------

def test_gradient_through_a_functional_op_raises_at_backward():
    x = torch.randn(3, 8, requires_grad=True)
    y = ops.rmsnorm(x, torch.ones(8), 1e-6)
    assert y.requires_grad  # forward works; only the gradient is refused
    with pytest.raises(RuntimeError, match="hetkern::rmsnorm has no backward"):
        y.sum().backward()
    assert x.grad is None


def test_gradient_of_a_weight_raises_too():
    w = torch.ones(8, requires_grad=True)
    with pytest.raises(RuntimeError, match="hetkern::layernorm has no backward"):
        ops.layernorm(torch.randn(3, 8), w, None, 1e-5).sum().backward()


def test_in_place_op_refuses_inputs_that_require_grad():
    x = torch.randn(3, 8, requires_grad=True)
    residual = torch.randn(3, 8)
    before = residual.clone()
    with pytest.raises(RuntimeError, match="hetkern::fused_add_rmsnorm writes its inputs in place"):
        ops.fused_add_rmsnorm(x, residual, torch.ones(8), 1e-6)
    assert torch.equal(residual, before)


def test_no_grad_and_inference_mode_run():
    x = torch.randn(3, 8, requires_grad=True)
    with torch.no_grad():
        assert not ops.relu(x).requires_grad
    with torch.inference_mode():
        assert torch.equal(ops.relu(x), torch.relu(x))


# ---- the direct call keeps working on torch tensors ------------------------------

@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_direct_call_and_torch_op_agree(device):
    x = torch.randn(4, 4096, device=device, dtype=torch.bfloat16)
    w = torch.randn(4096, device=device, dtype=torch.bfloat16)
    assert_bitwise_equal(hetkern.rmsnorm(x, w), ops.rmsnorm(x, w, 1e-6))


@pytest.mark.skipif(not HAVE_CUDA, reason="needs a CUDA GPU and a CUDA build of hetkern")
def test_torch_op_runs_on_the_current_stream():
    s = torch.cuda.Stream()
    x = torch.randn(64, 4096, device="cuda")
    with torch.cuda.stream(s):
        y = ops.softmax(x)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            z = ops.scale(x, 2.0)
    s.synchronize()
    x.mul_(3.0)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(z, x * 2.0)
    torch.testing.assert_close(y, torch.softmax(x / 3.0, -1))
