"""hetkern.jax (issue 10, item 3): every registry op inside jax.jit equals
hetkern.<op> bit for bit, on CPU and (where JAX has a GPU) CUDA, every
dtype; in-place ops are functional in JAX; vmap; static-argument errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

jax = pytest.importorskip("jax")
pytest.importorskip("jax_tvm_ffi")
jax.config.update("jax_enable_x64", True)  # float64 and int64 as the other tests use them

import jax.numpy as jnp  # noqa: E402

import hetkern  # noqa: E402
import hetkern.jax as hk  # noqa: E402
from conftest import DTYPES  # noqa: E402
from hetkern._registry import OPS  # noqa: E402
from registry_samples import HEAD, rope_cache, sample_args  # noqa: E402


def _jax_gpu() -> bool:
    try:
        return hetkern.built_with_cuda() and bool(jax.devices("gpu")) and torch.cuda.is_available()
    except RuntimeError:
        return False


DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.skipif(not _jax_gpu(), reason="needs JAX with a GPU"))]
_JAX_DTYPES = {torch.float32: jnp.float32, torch.float64: jnp.float64, torch.float16: jnp.float16,
               torch.bfloat16: jnp.bfloat16, torch.int64: jnp.int64,
               torch.uint8: jnp.uint8}  # the quant norms' out (float8_e4m3fn bits)


def to_jax(t: torch.Tensor, device: str):
    # NumPy has no bfloat16: 16-bit values travel as float32 (exactly)
    a = jnp.asarray(t.cpu().float().numpy() if t.element_size() == 2 else t.cpu().numpy())
    return jax.device_put(a.astype(_JAX_DTYPES[t.dtype]), jax.devices(device)[0])


def to_torch(a) -> torch.Tensor:
    return torch.from_numpy(np.array(jnp.asarray(a, jnp.float64)))


def _inputs(op, dtype, torch_device):
    values = sample_args(op, dtype, torch_device)
    if op.name == "rope":
        values["cos_sin_cache"] = rope_cache(dtype, torch_device)
    if op.name == "cast":
        values["dtype"] = torch.bfloat16 if dtype == torch.float32 else torch.float32
    return values


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_jit_equals_hetkern(op, dtype, device):
    torch_device = "cuda" if device == "gpu" else "cpu"
    values = _inputs(op, dtype, torch_device)
    expected_values = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in values.items()}
    expected = getattr(hetkern, op.name)(**expected_values)
    arrays = {k: to_jax(v, device) for k, v in values.items() if isinstance(v, torch.Tensor)}
    statics = {k: v for k, v in values.items() if not isinstance(v, torch.Tensor)}
    if "dtype" in statics:
        statics["dtype"] = _JAX_DTYPES[statics["dtype"]]
    fn = jax.jit(lambda arrays: getattr(hk, op.name)(**arrays, **statics))
    got = fn(arrays)
    if op.in_place:
        got = got if isinstance(got, tuple) else (got,)  # one written array: itself
        for name, g in zip(op.written, got):
            assert torch.equal(to_torch(g), expected_values[name].double().cpu()), name
        # functional in JAX: the caller's arrays are unchanged
        for name in op.written:
            assert torch.equal(to_torch(arrays[name]), values[name].double().cpu())
    else:
        assert got.dtype == _JAX_DTYPES[expected.dtype]
        assert got.shape == tuple(expected.shape)
        assert torch.equal(to_torch(got), expected.double().cpu())
        assert list(got.devices())[0].platform == device


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("op", [op for op in OPS if "weight" in {a.name for a in op.args}],
                         ids=lambda op: op.name)
def test_jit_float32_parameters(op, dtype, device):
    """The norms' mixed precision through JAX: 16-bit x, float32 weight/bias."""
    torch_device = "cuda" if device == "gpu" else "cpu"
    values = sample_args(op, dtype, torch_device, param_dtype=torch.float32)
    expected_values = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in values.items()}
    expected = getattr(hetkern, op.name)(**expected_values)
    arrays = {k: to_jax(v, device) for k, v in values.items() if isinstance(v, torch.Tensor)}
    statics = {k: v for k, v in values.items() if not isinstance(v, torch.Tensor)}
    got = jax.jit(lambda arrays: getattr(hk, op.name)(**arrays, **statics))(arrays)
    if op.in_place:
        got = got if isinstance(got, tuple) else (got,)  # one written array: itself
        for name, g in zip(op.written, got):
            assert torch.equal(to_torch(g), expected_values[name].double().cpu()), name
    else:
        assert got.dtype == _JAX_DTYPES[dtype]
        assert torch.equal(to_torch(got), expected.double().cpu())


def _reference(device):
    """hetkern on the same device as the JAX call: NumPy on CPU, torch on CUDA
    (CPU and CUDA kernels differ in the last bit where rows are reduced)."""
    if device == "cpu":
        return lambda a: a, lambda r: r
    return (lambda a: torch.from_numpy(a).cuda()), (lambda r: r.cpu().numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_optional_arrays_absent(device):
    # layernorm without bias and rope without key run through the adapter targets
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    w = np.ones(16, np.float32)
    put = lambda a: jax.device_put(a, jax.devices(device)[0])  # noqa: E731
    ref_in, ref_out = _reference(device)
    np.testing.assert_array_equal(jax.jit(lambda x, w: hk.layernorm(x, w))(put(x), put(w)),
                                  ref_out(hetkern.layernorm(ref_in(x), ref_in(w))))
    values = {k: v.numpy() for k, v in sample_args(OPS[[o.name for o in OPS].index("rope")]).items()
              if isinstance(v, torch.Tensor)}
    q, k = jax.jit(lambda p, q, c: hk.rope(p, q, None, HEAD, c, False))(
        put(values["positions"]), put(values["query"]), put(values["cos_sin_cache"]))
    expected = ref_in(values["query"].copy())
    hetkern.rope(ref_in(values["positions"]), expected, None, HEAD, ref_in(values["cos_sin_cache"]), False)
    assert k is None
    np.testing.assert_array_equal(q, ref_out(expected))


@pytest.mark.parametrize("device", DEVICES)
def test_long_rows_reduce_with_the_workspace(device):
    # rows longer than the CUDA chunk need float64 partials from XLA's workspace
    x = np.random.default_rng(1).standard_normal((3, 20000)).astype(np.float32)
    put = jax.device_put(x, jax.devices(device)[0])
    ref_in, ref_out = _reference(device)
    np.testing.assert_array_equal(jax.jit(hk.sum)(put), ref_out(hetkern.sum(ref_in(x))))
    np.testing.assert_array_equal(jax.jit(lambda x: hk.norm(x, None))(put), ref_out(hetkern.norm(ref_in(x), None)))


def cpu(*arrays):
    """On JAX's CPU device, to compare with hetkern on NumPy arrays."""
    return [jax.device_put(a, jax.devices("cpu")[0]) for a in arrays]


def test_vmap_row_ops_batch_in_one_call_and_weights_stay_shared():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3, 16)).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    np.testing.assert_array_equal(jax.jit(jax.vmap(hk.rmsnorm, (0, None)))(*cpu(x, w)), hetkern.rmsnorm(x, w))
    r = rng.standard_normal((5, 3, 16)).astype(np.float32)
    a, b = jax.vmap(hk.fused_add_rmsnorm, (0, 0, None))(*cpu(x, r, w))
    xe, re = x.copy(), r.copy()
    hetkern.fused_add_rmsnorm(xe, re, w)
    np.testing.assert_array_equal(a, xe)
    np.testing.assert_array_equal(b, re)
    np.testing.assert_array_equal(jax.vmap(hk.softmax)(*cpu(x)), hetkern.softmax(x))


def test_vmap_over_weights_maps_one_slice_at_a_time():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 3, 16)).astype(np.float32)
    w = rng.standard_normal((5, 16)).astype(np.float32)
    expected = np.stack([hetkern.rmsnorm(x[i], w[i]) for i in range(5)])
    np.testing.assert_array_equal(jax.jit(jax.vmap(hk.rmsnorm))(*cpu(x, w)), expected)
    expected = np.stack([hetkern.sum(x[i], None) for i in range(5)])
    np.testing.assert_array_equal(jax.vmap(lambda x: hk.sum(x, None))(*cpu(x)), expected)


def test_static_arguments_are_checked_at_trace_time():
    x = jnp.ones((2, 4), jnp.float32)
    with pytest.raises(TypeError, match="hetkern.jax.rmsnorm: 'eps' must be a real number"):
        jax.jit(lambda x: hk.rmsnorm(x, jnp.ones(4), "1e-6"))(x)
    with pytest.raises(TypeError, match="hetkern.jax.gelu: 'approximate' must be a str"):
        hk.gelu(x, approximate=1)
    with pytest.raises(TypeError, match="hetkern.jax.scale: 'factor' must be a real number"):
        jax.jit(lambda x, f: hk.scale(x, f))(x, 2.0)  # a traced factor is not static


def test_library_errors_surface_with_their_message():
    with pytest.raises(Exception, match="'weight' must have shape"):
        jax.block_until_ready(jax.jit(hk.rmsnorm)(jnp.ones((2, 4)), jnp.ones(3)))
