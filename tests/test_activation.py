"""Activations and gated activations against an exact (float64) reference and
against torch, on every dtype, size, alignment and CPU target, and on CUDA
where a GPU is present. Tolerances are those of docs/activation.md."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import hetkern
from conftest import DTYPES, assert_bitwise_equal, bytes_of, random_tensor, requires_cuda

SIZES = [0, 1, 3, 7, 15, 17, 31, 33, 63, 65, 127, 129, 1023, 1025, 4097, 65536 + 3]
OFFSETS = [0, 1]
NAMES = ["relu", "sigmoid", "silu", "gelu", "gelu_tanh", "tanh", "exp"]
K0, K1 = math.sqrt(2 / math.pi), 0.044715

HETKERN = {
    "relu": hetkern.relu,
    "sigmoid": hetkern.sigmoid,
    "silu": hetkern.silu,
    "gelu": hetkern.gelu,
    "gelu_tanh": lambda x, out=None: hetkern.gelu(x, "tanh", out=out),
    "tanh": hetkern.tanh,
    "exp": hetkern.exp,
}
TORCH = {
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "silu": F.silu,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "tanh": torch.tanh,
    "exp": torch.exp,
}

# ---- exact reference and error measure -------------------------------------

_erfc = np.vectorize(math.erfc, otypes=[np.float64])


_REFERENCES: dict = {}


def reference(name: str, x) -> np.ndarray:
    """Cached (every CPU target reuses the inputs) float64 reference."""
    t = torch.as_tensor(x).cpu()
    key = (name, t.dtype, tuple(t.shape), hashlib.sha1(bytes_of(t)).digest())
    if key not in _REFERENCES:
        _REFERENCES[key] = _reference_uncached(name, t)
    return _REFERENCES[key]


def _reference_uncached(name: str, x) -> np.ndarray:
    """act(x) rounded to float64, computed in x87 extended precision (wider
    exponent: no subnormal intermediates) except for gelu (double libm erfc,
    ~1e-14 relative), with torch's conventions at infinities (silu(-inf) = NaN)."""
    x = torch.as_tensor(x).cpu().double().numpy()
    if name != "gelu":
        x = x.astype(np.longdouble)
    with np.errstate(all="ignore"):
        return _reference(name, x).astype(np.float64)


def _reference(name, x):
    if name == "relu":
        return np.where(x < 0, 0.0, x)
    if name == "exp":
        return np.exp(x)
    if name == "tanh":
        return np.tanh(x)
    if name == "gelu":
        return x * (0.5 * _erfc(-x / math.sqrt(2)))
    z = 2 * K0 * (x + K1 * x**3) if name == "gelu_tanh" else x
    e = np.exp(-np.abs(z))
    sig = np.where(z < 0, e, 1.0) / (1 + e)
    return sig if name == "sigmoid" else x * sig


_PRECISION = {  # significand bits, exponent of the smallest subnormal
    torch.float32: (24, -149),
    torch.float64: (53, -1074),
    torch.float16: (11, -24),
    torch.bfloat16: (8, -133),
}


def ulp_of(ref: np.ndarray, dtype) -> np.ndarray:
    bits, min_exp = _PRECISION[dtype]
    _, e = np.frexp(np.abs(ref))
    return np.maximum(np.ldexp(1.0, (e - bits).astype(np.int64)), 2.0**min_exp)


def ulp_error(y, ref: np.ndarray, dtype) -> np.ndarray:
    """|y - ref| in units of the storage type's spacing at ref (subnormal
    spacing below the normal range); 0 where both are equal or both NaN."""
    y = torch.as_tensor(y).cpu().double().numpy()
    with np.errstate(all="ignore"):
        err = np.abs(y - ref) / ulp_of(ref, dtype)
    same = (y == ref) | (np.isnan(y) & np.isnan(ref))
    return np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))


def tolerance(name: str, dtype, x, device: str = "cpu"):
    """Allowed ulp error per element (docs/activation.md)."""
    if dtype in (torch.float16, torch.bfloat16):
        return 1.0  # float32 errors of a few ulp vanish in one rounding
    x = torch.as_tensor(x).cpu().double().numpy()
    if name == "gelu_tanh":  # the rounding of z = 2 k0 (x + k1 x^3) is amplified |z| times
        return 4.0 * (1 + np.abs(2 * K0 * (x + K1 * x**3)))
    if dtype == torch.float64 and name == "gelu":
        # libm erfc(x / sqrt 2) with x / sqrt 2 rounded: relative error up to
        # ~2 z^2 2^-53 = x^2 ulp, in our result and in the reference alike.
        return 8.0 + 3 * x * x
    if name == "gelu":
        # Over every float32 input: 3.93 ulp on the CPU's AVX-512 targets
        # (src/cpu/activation-tables.h); src/core/normal_cdf.h's formula 6.19
        # on AVX2, 7.37 on the targets without FMA (SSE4 and below;
        # tools/check-activation-cpu.py), 6.71 on CUDA's one-form float32
        # kernel (tools/check-activations.cu).
        return 8.0
    if device == "cuda":
        # silu: 6.26 ulp over every float32 input (tools/check-activations.cu;
        # e^(-|x|/2)'s error counts twice in (x h) h).
        return {"relu": 0, "exp": 2, "tanh": 2, "sigmoid": 4, "silu": 7}[name]
    return {"relu": 0, "exp": 1, "tanh": 3, "sigmoid": 3, "silu": 5}[name]


def rounded_reference(ref: np.ndarray, dtype) -> torch.Tensor:
    return torch.from_numpy(ref).to(dtype)


def assert_accurate(name, y, x, dtype, ref=None, extra_ulp=0.0, tol_scale=1.0, device="cpu"):
    """Within tolerance(x) * tol_scale + extra_ulp of the float64 reference;
    where the reference rounds to inf or NaN in the storage type, exactly that."""
    ref = reference(name, x) if ref is None else ref
    special = ~torch.isfinite(rounded_reference(ref, dtype)).numpy()
    y_cpu = torch.as_tensor(y).cpu()
    if special.any():
        assert_bitwise_equal(y_cpu[torch.from_numpy(special)],
                             rounded_reference(ref, dtype)[torch.from_numpy(special)])
    err = np.where(special, 0.0, ulp_error(y_cpu, ref, dtype))
    tol = tolerance(name, dtype, x, device) * tol_scale + extra_ulp
    bad = err > tol
    if bad.any():
        i = int(np.argmax(err - tol))
        xv = torch.as_tensor(x).cpu().double().numpy().reshape(-1)[i]
        raise AssertionError(
            f"{name} {dtype}: {int(bad.sum())} elements off by more than the tolerance; worst "
            f"x={xv!r}: got {y_cpu.reshape(-1)[i].item()!r}, exact {ref.reshape(-1)[i]!r} "
            f"({err.reshape(-1)[i]:.2f} ulp)"
        )


def assert_matches_torch(name, y, x, dtype):
    """Within the tolerance of torch's own result, or closer to the exact
    value than torch is (torch flushes tails to 0 or cancels in 1 + erf)."""
    expected = TORCH[name](x)
    if name == "relu":
        assert_bitwise_equal(y, expected)
        return
    ref = reference(name, x)
    y_err = ulp_error(y, ref, dtype)
    torch_err = ulp_error(expected, ref, dtype)
    near_torch = ulp_error(y, torch.as_tensor(expected).cpu().double().numpy(), dtype)
    tol = tolerance(name, dtype, x) + (0 if dtype in (torch.float16, torch.bfloat16) else 2)
    ok = (near_torch <= tol) | (y_err <= torch_err)
    # Documented deviation: torch's CPU erf-GELU gives NaN at +inf, we give inf.
    if name == "gelu":
        ok |= torch.as_tensor(x).cpu().double().numpy() == np.inf
    assert ok.all(), f"{name} {dtype}: {(~ok).sum()} elements far from torch and less accurate"


def inputs(n: int, dtype, device="cpu", seed: int = 0, offset: int = 0):
    """Values where the activations are interesting (|x| up to ~20), with a
    sprinkle of wide magnitudes from random_tensor; misaligned for offset != 0."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(n + offset, generator=g, dtype=torch.float64) * 5
    wide = random_tensor(n + offset, torch.float64, seed=seed)
    base[::7] = wide[::7]
    return base.to(dtype).to(device)[offset:]


# ---- CPU: elementwise --------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_sizes_and_alignments(cpu_target, dtype, name):
    for n in SIZES:
        for offset in OFFSETS if n < 5000 else [1]:  # keeps the suite fast
            x = inputs(n, dtype, seed=n, offset=offset)
            y = HETKERN[name](x)
            assert y.dtype == dtype and y.shape == x.shape
            assert_accurate(name, y, x, dtype)
            if dtype != torch.float64:  # float64 is compared with the exact value only
                assert_matches_torch(name, y, x, dtype)


_SWEEP = None


def _sweep():
    """float32 inputs covering every regime: a dense grid over [-110, 100],
    a finer one over [-15, 5] and random bit patterns (subnormals included)."""
    global _SWEEP
    if _SWEEP is None:
        rng = np.random.default_rng(0)
        bits = rng.integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
        # The float32 erf-GELU's worst inputs over every float32 (CPU AVX2,
        # CPU targets without FMA, CUDA's two branches until stop 47, the
        # CPU's AVX-512 table form, CUDA's one form since:
        # tools/check-activation-cpu.py and tools/check-activations.cu) and the
        # 4096 floats around each.
        worst = np.array([-1.8307490348815918, -1.8297561407089233, -1.83028924, -12.103172302246094,
                          -0.340272516], np.float32)
        around = (worst.view(np.int32)[:, None] + np.arange(-2048, 2048, dtype=np.int32)).view(np.float32)
        x = np.concatenate([np.linspace(-110, 100, 100_001), np.linspace(-15, 5, 100_001),
                            bits[np.isfinite(bits)], around.reshape(-1)]).astype(np.float32)
        _SWEEP = (torch.from_numpy(x), {name: reference(name, x) for name in NAMES})
    return _SWEEP


@pytest.mark.parametrize("name", NAMES)
def test_cpu_float32_accuracy_sweep(cpu_target, name):
    x, refs = _sweep()
    assert_accurate(name, HETKERN[name](x), x, torch.float32, ref=refs[name])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_cpu_every_16bit_pattern(cpu_target, dtype, name):
    x = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    y = HETKERN[name](x)
    assert_accurate(name, y, x, dtype)
    assert_matches_torch(name, y, x, dtype)


def test_cpu_float64_sweep(cpu_target):
    x = torch.linspace(-40, 40, 20001, dtype=torch.float64)
    for name in NAMES:
        assert_accurate(name, HETKERN[name](x), x, torch.float64)


NAN, INF = float("nan"), float("inf")
# (x, expected act(x)) per op, torch's conventions (checked against torch below
# except where the docs list a deviation).
SPECIALS = [0.0, -0.0, INF, -INF, NAN, -90.0, -100.0, -200.0, 90.0, 1e-45, -1e-45, 1e-40, -3e-39,
            88.7, 89.0, -87.5, -104.0, 1e30, -1e30, 18.8, -18.8, 6.0, -6.0]
EXPECTED = {
    "relu": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, 0.0), (-1e30, 0.0)],
    "sigmoid": [(0.0, 0.5), (INF, 1.0), (-INF, 0.0), (-200.0, 0.0), (1e30, 1.0), (-1e30, 0.0)],
    "silu": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, NAN), (-200.0, -0.0), (1e30, 1e30)],
    "gelu": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, NAN), (-200.0, -0.0), (1e30, 1e30)],
    "gelu_tanh": [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, NAN), (-200.0, -0.0), (1e30, 1e30)],
    "tanh": [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0), (1e30, 1.0), (-1e30, -1.0)],
    "exp": [(0.0, 1.0), (-0.0, 1.0), (INF, INF), (-INF, 0.0), (89.0, INF), (-104.0, 0.0), (-200.0, 0.0)],
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_special_values(cpu_target, dtype, name):
    check_special_values(name, dtype, "cpu")


def check_special_values(name, dtype, device):
    x = torch.tensor(SPECIALS, dtype=torch.float64).to(dtype).to(device)
    y = HETKERN[name](x).cpu()
    assert bool(y[4].isnan()), f"{name}(NaN) must be NaN"
    for value, expected in EXPECTED[name]:
        if dtype == torch.float64 and value in (89.0, -104.0, -200.0):
            continue  # over/underflow thresholds of the 32- and 16-bit types
        i = next(i for i, v in enumerate(SPECIALS) if v == value and math.copysign(1, v) == math.copysign(1, value))
        assert_bitwise_equal(y[i:i + 1], torch.tensor([expected], dtype=dtype))
    assert_accurate(name, y, x, dtype, device=device)
    if dtype != torch.float64 and device == "cpu":
        assert_matches_torch(name, y, x, dtype)


def test_in_place(cpu_target):
    for name in NAMES:
        x = inputs(1027, torch.bfloat16, offset=1)
        expected = HETKERN[name](x)
        assert HETKERN[name](x, out=x) is x
        assert_bitwise_equal(x, expected)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5, 7), (2, 3, 4, 5)])
def test_shapes_and_numpy(shape):
    x = torch.randn(shape)
    for name in NAMES:
        y = HETKERN[name](x)
        assert y.shape == x.shape
        yn = HETKERN[name](x.numpy())
        assert type(yn) is np.ndarray and yn.shape == x.shape and yn.dtype == np.float32
        assert_bitwise_equal(torch.from_numpy(yn), y)


@pytest.mark.parametrize("threads", [2, 3])
def test_threaded_results_equal_single_threaded(threads):
    x = inputs(3 * 2**16 + 5, torch.float32, offset=1)
    gated = inputs(37 * 2 * 1031, torch.bfloat16).reshape(37, 2 * 1031)
    try:
        hetkern.set_num_threads(1)
        single = [HETKERN[name](x) for name in NAMES] + [hetkern.silu_and_mul(gated)]
        hetkern.set_num_threads(threads)
        multi = [HETKERN[name](x) for name in NAMES] + [hetkern.silu_and_mul(gated)]
    finally:
        hetkern.set_num_threads(0)
    for a, b in zip(single, multi):
        assert_bitwise_equal(b, a)


# ---- gated activations -------------------------------------------------------

GATED = {
    "silu": (hetkern.silu_and_mul, F.silu),
    "gelu": (lambda x, out=None: hetkern.gelu_and_mul(x, out=out), F.gelu),
    "gelu_tanh": (lambda x, out=None: hetkern.gelu_and_mul(x, "tanh", out=out),
                  lambda v: F.gelu(v, approximate="tanh")),
}
GATED_SHAPES = [(0, 2), (1, 2), (3, 2), (1, 6), (5, 14), (3, 16), (2, 34), (4, 130), (2, 2050),
                (1, 131072 + 16), (2, 3, 66), (7, 0)]


def check_gated(name, dtype, shape, device, offset=0):
    ours, act = GATED[name]
    n = math.prod(shape)
    x = inputs(n, dtype, device=device, seed=n, offset=offset).reshape(shape)
    d = shape[-1] // 2
    y = ours(x)
    assert y.shape == shape[:-1] + (d,) and y.dtype == dtype and y.device == x.device
    gate, up = x[..., :d].cpu(), x[..., d:].cpu()
    compute = torch.float64 if dtype == torch.float64 else torch.float32
    # act(gate) rounded to the compute type, as the kernel holds it: gelu(-15)
    # is 0 there, and 0 * inf must stay NaN.
    act_ref = rounded_reference(reference(name, gate), compute).double().numpy()
    with np.errstate(invalid="ignore"):  # 0 * inf
        ref = act_ref * up.double().numpy()
    bits, min_exp = _PRECISION[compute]
    up_abs = np.abs(up.double().numpy())
    scale = 1.0
    with np.errstate(all="ignore"):
        if dtype == compute:
            # act's error is bounded in ulps of act(gate); times |up| it is
            # f = ulp(act) |up| / ulp(product) ulps of the product, f in (0.5, 2]
            # (the two significands sit anywhere in their binades; subnormal
            # spacing where act is subnormal, which covers the |up|-amplified
            # rounding of a tiny act). Add half an ulp of act (ref uses act
            # rounded) times f and the product's rounding: act's bound + 1 ulp,
            # with act's ulps converted to the product's.
            ulp_act = np.where(act_ref == 0, 2.0**min_exp, ulp_of(act_ref, compute))
            scale = np.nan_to_num(ulp_act * up_abs / ulp_of(ref, dtype), posinf=0.0).reshape(-1)
            extra = 0.5 * scale + 0.5
        else:
            # The float32 errors vanish in the 16-bit rounding, except where
            # act(gate) is subnormal in float32: its absolute rounding error (up
            # to half the smallest subnormal) is multiplied by |up|, the price
            # of vLLM's act-then-multiply order.
            tiny = np.abs(act_ref) < 2.0 ** (min_exp + bits - 1)
            extra = np.where(tiny, up_abs * 2.0**min_exp / ulp_of(ref, dtype), 0.0).reshape(-1)
    if dtype == torch.float64 and device == "cuda":
        # Seen on the H100: where the float64 product is subnormal (|ref| <
        # 2^-1022, e.g. gelu_tanh(-21.2) * up), CUDA's double exp path is off by
        # up to ~140 subnormal spacings (~7e-322 absolute); allowed up to 1024
        # spacings (2^-1064) there, nowhere else. docs/activation.md.
        extra = extra + np.where(np.abs(ref.reshape(-1)) < 2.0**-1022, 1024.0, 0.0)
    tol_x = gate.reshape(-1)
    assert_accurate(name, y.reshape(-1), tol_x, dtype, ref=ref.reshape(-1), extra_ulp=extra,
                    tol_scale=scale, device=device)
    if dtype in (torch.float16, torch.bfloat16):
        # vLLM's contract: act in float32 times up in float32, rounded once.
        expected = (act(gate.float()) * up.float()).to(dtype)
        near = ulp_error(y.cpu(), expected.double().numpy(), dtype) <= 1
        closer = ulp_error(y.cpu(), ref, dtype) <= ulp_error(expected, ref, dtype)
        assert (near | closer).all()


@pytest.mark.parametrize("name", list(GATED))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_gated(cpu_target, dtype, name):
    for shape in GATED_SHAPES:
        for offset in OFFSETS if math.prod(shape) < 5000 else [1]:
            check_gated(name, dtype, shape, "cpu", offset)


def test_gated_numpy_and_out():
    x = np.random.default_rng(0).standard_normal((3, 10)).astype(np.float32)
    out = np.full((3, 5), 7.0, np.float32)
    assert hetkern.silu_and_mul(x, out=out) is out
    expected = F.silu(torch.from_numpy(x[:, :5])) * torch.from_numpy(x[:, 5:])
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-6, atol=1e-30)


GATED_ERRORS = [
    ("odd-last-dim", ValueError, "'x' has last dimension 5; the last dimension must be even",
     lambda out: hetkern.silu_and_mul(np.ones((2, 5), np.float32), out=out)),
    ("odd-last-dim-no-out", ValueError, "last dimension must be even",
     lambda out: hetkern.gelu_and_mul(np.ones((2, 5), np.float32))),
    ("zero-dim", ValueError, "'x' is 0-dimensional",
     lambda out: hetkern.silu_and_mul(np.ones((), np.float32))),
    ("out-shape", ValueError, r"'out' has shape \(2, 4\); expected \(2, 3\)",
     lambda out: hetkern.silu_and_mul(np.ones((2, 6), np.float32), out=out)),
    ("out-dtype", ValueError, "'out' has dtype float32; expected float64",
     lambda out: hetkern.silu_and_mul(np.ones((2, 8)), out=out)),
    ("bad-approximate", ValueError, "'approximate' is 'erf'; expected 'none' or 'tanh'",
     lambda out: hetkern.gelu_and_mul(np.ones((2, 8), np.float32), "erf", out=out)),
    ("approximate-type", TypeError, "'approximate' must be a str",
     lambda out: hetkern.gelu_and_mul(np.ones((2, 8), np.float32), None, out=out)),
    ("x-list", TypeError, "'x' must be an array", lambda out: hetkern.silu_and_mul([1.0, 2.0], out=out)),
    ("x-int", ValueError, "'x' has dtype int32", lambda out: hetkern.silu_and_mul(np.ones((2, 8), np.int32), out=out)),
    ("x-strided", ValueError, "'x' must be contiguous",
     lambda out: hetkern.silu_and_mul(np.ones((2, 16), np.float32)[:, ::2], out=out)),
    ("unary-bad-approximate", ValueError, "hetkern.gelu: 'approximate' is 'fast'",
     lambda out: hetkern.gelu(np.ones(8, np.float32), "fast", out=out[0])),
    ("unary-shape", ValueError, r"hetkern.silu: 'out' has shape \(2, 4\); expected \(8,\)",
     lambda out: hetkern.silu(np.ones(8, np.float32), out=out)),
    ("unary-dtype", ValueError, "hetkern.exp: 'out' has dtype float32; expected float16",
     lambda out: hetkern.exp(np.ones((2, 4), np.float16), out=out)),
    ("unary-list", TypeError, "hetkern.tanh: 'x' must be an array", lambda out: hetkern.tanh([1.0], out=out)),
]


@pytest.mark.parametrize("case", GATED_ERRORS, ids=[c[0] for c in GATED_ERRORS])
def test_bad_input_raises_and_writes_nothing(case):
    _, exc, fragment, call = case
    out = np.full((2, 4), 7.0, np.float32)
    before = bytes_of(out)
    with pytest.raises(exc, match=fragment):
        call(out)
    assert bytes_of(out) == before


def test_gated_overlap_and_read_only():
    buf = np.ones(40, np.float32)
    with pytest.raises(ValueError, match="'out' overlaps 'x'"):
        hetkern.silu_and_mul(buf[:16].reshape(2, 8), out=buf[:8].reshape(2, 4))
    with pytest.raises(ValueError, match="'out' partially overlaps 'x'"):
        hetkern.silu_and_mul(buf[:16].reshape(2, 8), out=buf[12:20].reshape(2, 4))
    assert (buf == 1.0).all()
    out = np.full((2, 4), 7.0, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="'out' is read-only"):
        hetkern.silu_and_mul(np.ones((2, 8), np.float32), out=out)
    assert (out == 7.0).all()


# ---- bits independent of the path an element takes ---------------------------


def check_bits_independent_of_alignment(name, dtype, device):
    """An element's result may not depend on its address: in a vector pack,
    in the scalar head or tail (out with x's phase), or in the kernel of
    single lanes (x and out in different phases). Where a * b + c is left to
    the compiler's contraction, one path can fuse it and another not (the
    kernels spell every fma; docs/activation.md)."""
    n = 4096 + 37
    x_base = inputs(n + 8, dtype, device=device, seed=7)
    expected = HETKERN[name](x_base)
    out_base = torch.empty_like(x_base)
    for offset in range(1, 8):
        x = x_base[offset:]
        assert_bitwise_equal(HETKERN[name](x), expected[offset:])
        out = out_base[offset:]
        assert HETKERN[name](x, out=out) is out
        assert_bitwise_equal(out, expected[offset:])


def check_gated_bits_independent_of_shape(name, dtype, device, row_counts):
    """A row's result may depend neither on the call's row count (the CUDA
    kernel's pack width and unroll follow the call's size, the CPU's thread
    split too) nor on x's alignment (misaligned x takes single lanes)."""
    ours, _ = GATED[name]
    d = 1024
    x = inputs(max(row_counts) * 2 * d, dtype, device=device, seed=11).reshape(-1, 2 * d)
    expected = ours(x)
    for rows in row_counts:
        assert_bitwise_equal(ours(x[:rows]), expected[:rows])
    shifted = torch.empty(x.numel() + 1, dtype=dtype, device=device)[1:].view(x.shape)
    shifted.copy_(x)
    assert_bitwise_equal(ours(shifted), expected)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_bits_independent_of_alignment(cpu_target, dtype, name):
    check_bits_independent_of_alignment(name, dtype, "cpu")


@pytest.mark.parametrize("name", list(GATED))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cpu_gated_bits_independent_of_shape(cpu_target, dtype, name):
    check_gated_bits_independent_of_shape(name, dtype, "cpu", [1, 3, 64])


@requires_cuda
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_bits_independent_of_alignment(dtype, name):
    check_bits_independent_of_alignment(name, dtype, "cuda")


@requires_cuda
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_bits_independent_of_call_size(dtype, name):
    """Calls larger than the resident grid take two packs a thread for some
    ops (elementwise.cuh's kLargeCallPacks): 3 * 2^21 + 5 values are
    1572864 16-byte packs of float32 (786432 of 16-bit), more than 2048
    threads on each of up to 192 SMs. Every element must come out as from
    calls of 65539 values (one pack a thread), each slice in its own phase
    of the packs."""
    n, piece = 3 * 2**21 + 5, 65539
    x = inputs(n, dtype, device="cuda", seed=5)
    y = HETKERN[name](x)
    expected = torch.cat([HETKERN[name](x[i:i + piece]) for i in range(0, n, piece)])
    assert_bitwise_equal(y, expected)
    out = torch.empty(n + 1, dtype=dtype, device="cuda")[1:]  # x and out out of phase: single lanes
    assert HETKERN[name](x, out=out) is out
    assert_bitwise_equal(out, expected)


@requires_cuda
@pytest.mark.parametrize("name", list(GATED))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_gated_bits_independent_of_shape(dtype, name):
    # 1 row to 4096 rows of 1024 values: every pack width and unroll of
    # GatedActivate's size ladder on a GPU of up to 132 SMs (16-bit: 4-byte
    # packs to 132 rows, 8-byte to 264, 16-byte to 2112, then 2 a thread).
    check_gated_bits_independent_of_shape(name, dtype, "cuda", [1, 100, 200, 1000, 4096])


# ---- CUDA ---------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_sizes_alignments_and_specials(dtype, name):
    for n in SIZES + [2**22 + 5]:
        for offset in OFFSETS + [3]:
            x = inputs(n, dtype, device="cuda", seed=n, offset=offset)
            y = HETKERN[name](x)
            assert y.device == x.device and y.dtype == dtype
            assert_accurate(name, y, x, dtype, device="cuda")
    check_special_values(name, dtype, "cuda")


@requires_cuda
@pytest.mark.parametrize("name", NAMES)
def test_cuda_float32_accuracy_sweep(name):
    x, refs = _sweep()
    assert_accurate(name, HETKERN[name](x.cuda()), x, torch.float32, ref=refs[name], device="cuda")


@requires_cuda
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_cuda_every_16bit_pattern(dtype, name):
    x = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    assert_accurate(name, HETKERN[name](x.cuda()), x, dtype, device="cuda")


@requires_cuda
@pytest.mark.parametrize("packs_per_thread", [2, 16])
@pytest.mark.parametrize("offset", [0, 3])
def test_cuda_bfloat16_gelu_table_every_pattern(offset, packs_per_thread):
    """Large bfloat16 erf-GELU calls look values up in a table
    (activation.cu's GeluBf16TableKernel; from 2 and from 16 packs of 8 a
    resident thread, 2 x 1024 an SM, in two block shapes), with x / 2 below
    it and the formula beyond. Every bit pattern, in random order, so at
    every lane of a pack (offset 3: in the head and tail too, x and out in
    phase), must come out as from one call of the 65536 patterns (the
    formula)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    patterns = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16).cuda()
    by_pattern = hetkern.gelu(patterns)
    n = packs_per_thread * 2 * 1024 * sms * 8 + 5
    g = torch.Generator(device="cuda").manual_seed(offset)
    index = torch.randint(0, 2**16, (n,), device="cuda", generator=g)
    index[: 2**16] = torch.arange(2**16, device="cuda")  # each pattern at least once
    x = torch.empty(n + offset, dtype=torch.bfloat16, device="cuda")[offset:]
    x.copy_(patterns[index])
    out = torch.empty(n + offset, dtype=torch.bfloat16, device="cuda")[offset:]
    assert hetkern.gelu(x, out=out) is out
    assert_bitwise_equal(out, by_pattern[index])
    # Lanes taking the formula are rare in real activations; here every pack
    # of 8 holds one (-inf), next to table and x / 2 lanes. `out` keeps x's
    # phase, so offset 3 takes the table kernel too (a fresh result would
    # start in another phase and go to MapUnary's single lanes).
    x[: n - n % 8].view(-1, 8)[:, 5] = float("-inf")
    assert hetkern.gelu(x, out=out) is out
    assert_bitwise_equal(out, by_pattern[x.view(torch.int16).long() + 2**15])


@requires_cuda
@pytest.mark.parametrize("name", list(GATED))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_gated(dtype, name):
    # 3000 rows: more than the grid (16 blocks per SM), so blocks loop over
    # rows; (1, 131072 + 16) already has threads loop within a row.
    for shape in GATED_SHAPES + [(3000, 2 * 264)]:
        for offset in OFFSETS:
            check_gated(name, dtype, shape, "cuda", offset)


@requires_cuda
def test_cuda_misaligned_out_and_in_place():
    x = inputs(4099, torch.float16, device="cuda", offset=1)
    out_base = torch.empty(4101, device="cuda", dtype=torch.float16)
    out = out_base[2:4101]
    hetkern.silu(x, out=out)
    assert_bitwise_equal(out, hetkern.silu(x))
    expected = hetkern.gelu(x)
    assert hetkern.gelu(x, out=x) is x
    assert_bitwise_equal(x, expected)


@requires_cuda
def test_cuda_runs_on_current_stream():
    """On a side stream, x is filled only after a long GPU sleep; a kernel
    launched anywhere but on that stream would read x before the fill."""
    x = torch.zeros(1 << 20, device="cuda")
    g = torch.zeros(64, 2 * 4096, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.fill_(1.0)
        g.fill_(1.0)
        y = hetkern.exp(x)
        z = hetkern.silu_and_mul(g)
    side.synchronize()
    assert bool((y == math.e).all() | (y == torch.tensor(math.e, dtype=torch.float32, device="cuda")).all())
    # hetkern's own result once g is surely filled (torch's F.silu(1) may
    # differ in the last ulp); a launch that read g early would give 0.
    expected = hetkern.silu_and_mul(g)
    torch.cuda.synchronize()
    assert float(expected[0, 0]) == pytest.approx(F.silu(torch.tensor(1.0)).item(), rel=1e-6)
    assert_bitwise_equal(z, expected)


@requires_cuda
def test_cuda_graph_capture_and_replay():
    x = torch.randn(1 << 16, device="cuda")
    g = torch.randn(33, 2 * 1000, device="cuda", dtype=torch.bfloat16)
    out, gout = torch.empty_like(x), torch.empty(33, 1000, device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up outside the graph
        hetkern.gelu(x, "tanh", out=out)
        hetkern.silu_and_mul(g, out=gout)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hetkern.gelu(x, "tanh", out=out)
        hetkern.silu_and_mul(g, out=gout)
    x.copy_(torch.randn_like(x))
    g.copy_(torch.randn_like(g))
    graph.replay()
    torch.cuda.synchronize()
    assert_bitwise_equal(out, hetkern.gelu(x, "tanh"))
    assert_bitwise_equal(gout, hetkern.silu_and_mul(g))


@requires_cuda
def test_cuda_bad_input_writes_nothing():
    out = torch.full((2, 4), 7.0, device="cuda")
    with pytest.raises(ValueError, match="last dimension must be even"):
        hetkern.silu_and_mul(torch.ones(2, 5, device="cuda"), out=out)
    with pytest.raises(ValueError, match="'out' is on cuda:0; expected cpu like 'x'"):
        hetkern.silu_and_mul(torch.ones(2, 8), out=out)
    assert bool((out == 7.0).all())
