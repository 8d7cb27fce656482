"""16-bit activations read from tables (src/cpu/activation.cc): a table holds
the kernel's own result for each of the 65536 bit patterns, built on first
use by the target in use, so the table path must give the computing path's
bits on every target, op and dtype, NaN payloads included, at any thread
count, with one build per table however many threads race for it.

The internal knob hetkern._lib.module._set_activation_table_min_elements(n)
forces the choice: 0 reads tables on every call (every target), a huge n
never, -1 restores each target's default."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

import hetkern
from test_activation import GATED as GATED_ACTIVATIONS
from test_activation import HETKERN as ACTIVATIONS

_lib = hetkern._lib.module
ALWAYS, NEVER = 0, 1 << 62
HALF = [torch.float16, torch.bfloat16]

# The ops with a table: test_activation's, but relu (a compare, computed).
UNARY = {name: op for name, op in ACTIVATIONS.items() if name != "relu"}
GATED = {f"{name}_and_mul": op for name, (op, _) in GATED_ACTIVATIONS.items()}


def with_tables(min_elements, fn, *args, **kwargs):
    previous = _lib._set_activation_table_min_elements(min_elements)
    try:
        return fn(*args, **kwargs)
    finally:
        _lib._set_activation_table_min_elements(previous)


def both_paths(fn, *args, **kwargs):
    """(computed, looked up): fn's result with tables off, then forced."""
    return with_tables(NEVER, fn, *args, **kwargs), with_tables(ALWAYS, fn, *args, **kwargs)


def same_bits(a, b, any_nan=None):
    """Bit equality of 16-bit results, NaN payloads included, except where
    any_nan is set and both are NaN."""
    assert a.dtype == b.dtype and a.shape == b.shape
    equal = a.view(torch.int16) == b.view(torch.int16)
    if any_nan is not None:
        equal |= any_nan & a.isnan() & b.isnan()
    assert equal.all(), f"{int((~equal).sum())} results differ"


def every_pattern(dtype):
    return torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_table_gives_the_kernels_bits_for_every_pattern(cpu_target, dtype, name):
    op = UNARY[name]
    x = every_pattern(dtype)
    computed, looked_up = both_paths(op, x)
    same_bits(looked_up, computed)
    # Misaligned, odd length (vector tail), and in place.
    y = x[1:-2]
    same_bits(with_tables(ALWAYS, op, y), computed[1:-2])
    z = x.clone()
    with_tables(ALWAYS, op, z, out=z)
    same_bits(z, computed)


def gated_input(dtype, rows, d, pad=0):
    """Gates: every 16-bit pattern (rows * d of them, cycled); ups: random bit
    patterns (NaNs, infinities, subnormals among them) and ordinary values.
    pad > 0 gives rows a stride larger than 2 * d (x[:, :2 * d] of a wider array)."""
    g = torch.Generator().manual_seed(rows * d)
    gate = every_pattern(dtype).repeat((rows * d) // 65536 + 1)[: rows * d].reshape(rows, d)
    up = torch.randint(-(2**15), 2**15, (rows, d), generator=g, dtype=torch.int32).to(torch.int16).view(dtype)
    up[::2] = (torch.randn(rows // 2 + rows % 2, d, generator=g) * 3).to(dtype)
    wide = torch.cat([gate, up, torch.zeros(rows, pad, dtype=dtype)], dim=1)
    return wide[:, : 2 * d]


@pytest.mark.parametrize("name", list(GATED))
@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_gated_table_gives_the_kernels_bits(cpu_target, dtype, name):
    op = GATED[name]
    for rows, d, pad in [(256, 256, 0), (131, 509, 3), (1, 65536 + 7, 0)]:
        x = gated_input(dtype, rows, d, pad)
        computed, looked_up = both_paths(op, x)
        # act(gate) * up with both NaN: which payload survives depends on the
        # operand order the compiler gives vmulps in each loop (IEEE leaves it
        # open; torch's paths differ too). Every other result is bit-equal.
        same_bits(looked_up, computed, any_nan=x[:, d:].isnan())


@pytest.mark.parametrize("threads", [2, 3])
def test_table_path_same_bits_at_any_thread_count(threads):
    x = torch.randn(3 * 2**16 + 5, dtype=torch.float64).mul(5).to(torch.bfloat16)[1:]
    gated = torch.randn(37, 2 * 4099).to(torch.float16)
    calls = [lambda: UNARY[name](x) for name in UNARY] + [lambda: GATED[name](gated) for name in GATED]
    try:
        hetkern.set_num_threads(1)
        single = [with_tables(ALWAYS, call) for call in calls]
        hetkern.set_num_threads(threads)
        multi = [with_tables(ALWAYS, call) for call in calls]
    finally:
        hetkern.set_num_threads(0)
    for a, b in zip(single, multi):
        same_bits(b, a)


def test_default_choice_gives_the_same_bits(cpu_target):
    """Whatever the target's default (tables from 64K elements on AVX3_ZEN4
    and newer, computing elsewhere), a large call equals the computed one."""
    x = torch.randn(2**17 + 3).mul(4).to(torch.bfloat16)
    for op in list(UNARY.values()):
        same_bits(op(x), with_tables(NEVER, op, x))
    g = torch.randn(64, 2 * 2048).to(torch.float16)
    for op in GATED.values():
        same_bits(op(g), with_tables(NEVER, op, g))  # no NaN among these ups


def test_threads_racing_for_a_table_build_it_once():
    """8 OpenMP threads ask for each (target, dtype, op) table at once, in a
    fresh process: each table is built once, and the results are the
    computed ones."""
    script = textwrap.dedent(
        """
        import torch, hetkern
        lib = hetkern._lib.module
        hetkern.set_num_threads(8)
        assert lib._activation_tables_built() == 0
        x = torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16).repeat(4)
        g = torch.randn(64, 2 * 8192).to(torch.float16)
        lib._set_activation_table_min_elements(1 << 62)
        expected = [hetkern.gelu(x), hetkern.silu(x), hetkern.silu_and_mul(g)]
        lib._set_activation_table_min_elements(0)
        for i in range(3):
            got = [hetkern.gelu(x), hetkern.silu(x), hetkern.silu_and_mul(g)]
            for a, b in zip(got, expected):
                assert torch.equal(a.view(torch.int16), b.view(torch.int16))
            assert lib._activation_tables_built() == 3, lib._activation_tables_built()
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_table_holds_ieee_results_when_built_under_ftz():
    """A table built by a thread that flushes subnormals (FTZ/DAZ, e.g. after
    torch.set_flush_denormal(True)) still holds the IEEE results, and the
    thread's mode is restored: in a fresh process, one thread, the table of
    bfloat16 exp is built under FTZ; exp(-90) is subnormal (2^-129.8)."""
    script = textwrap.dedent(
        """
        import torch, hetkern
        lib = hetkern._lib.module
        hetkern.set_num_threads(1)
        x = torch.arange(-2**15, 2**15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
        lib._set_activation_table_min_elements(1 << 62)
        ieee = hetkern.exp(x)
        tiny = x == -90
        assert (ieee[tiny] > 0).all()
        if not torch.set_flush_denormal(True):
            print("ok")  # this CPU cannot flush: nothing to test
            raise SystemExit
        flushed = hetkern.exp(x)
        assert (flushed[tiny] == 0).all()
        lib._set_activation_table_min_elements(0)
        looked_up = hetkern.exp(x)
        assert lib._activation_tables_built() == 1
        assert torch.equal(looked_up.view(torch.int16), ieee.view(torch.int16))
        lib._set_activation_table_min_elements(1 << 62)
        assert (hetkern.exp(x)[tiny] == 0).all()  # still flushing: mode restored
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
