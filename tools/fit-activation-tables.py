#!/usr/bin/env python3
"""Writes src/cpu/activation-tables.h: the piecewise polynomials that the
AVX-512 CPU targets evaluate for float32 erf-GELU and tanh
(src/cpu/activation-inl.h). 32 intervals at most, so that a coefficient of
every interval sits in two 16-lane registers and one vpermt2ps reads it.

* GELU: Q(t) = Phi(-t) = e^(-t^2/2) S(t), S(t) = erfcx(t / sqrt 2) / 2 (smooth
  and slowly varying: 1/2 at 0, ~1/(t sqrt(2 pi)) in the tail). t in [0, 15)
  is cut by the exponent and top three mantissa bits of t + 1 (widths 1/8 on
  [0, 1), 1/4, 1/2, then 1 on [7, 15)): interval (bits(t + 1) >> 20) -
  (127 << 3). Degree 4 in r = t - center.
* tanh(t), t in [0, 10] (1 where float32 tanh is 1): [0, 1/16) (center 0, no constant term, so that
  tanh(t) ~ t keeps its relative accuracy), four intervals a binade on
  [1/16, 8), then [8, 10] (tanh(10) rounds to 1): interval clamp((bits(t) >>
  21) - (123 * 4 - 1), 0, 29). Degree 5 in r = t - center.

Each polynomial minimises the relative error (Lawson's weighted least squares
on Chebyshev nodes; references: scipy's erfcx, numpy's tanh in float64); the
coefficients are rounded to float32 one at a time from the constant up, each
rounding compensated by refitting the higher ones. The header's comments give
each table's largest error as the kernel evaluates it (float32 r, Horner with
fused multiply-adds).

    python tools/fit-activation-tables.py > src/cpu/activation-tables.h
"""

import sys

import numpy as np
import scipy.special

ENTRIES = 32


def normal_cdf_intervals() -> list[tuple[float, float]]:
    return [(2.0**e * (1 + m / 8) - 1, 2.0**e * (1 + (m + 1) / 8) - 1) for e in range(4) for m in range(8)]


def tanh_intervals() -> list[tuple[float, float]]:
    quarters = [(2.0**e * (1 + m / 4), 2.0**e * (1 + (m + 1) / 4)) for e in range(-4, 3) for m in range(4)]
    return [(0.0, 1 / 16)] + quarters + [(8.0, 10.0)]


def tanh_rounding_to_one(t):
    """tanh, and 1 where float32 tanh is 1 (t >= 9.0109...): the fit then
    reaches 1 there, so p(kClamp) = 1 exactly."""
    y = np.tanh(t)
    return np.where(y.astype(np.float32) == 1, 1.0, y)


def near_minimax(r, y, degree, fixed):
    """Coefficients 0..degree minimising max |p/y - 1|; `fixed` maps the
    indices already chosen to their values (Lawson's iteration)."""
    free = [i for i in range(degree + 1) if i not in fixed]
    base = sum(c * r**i for i, c in fixed.items())
    basis = np.stack([r**i for i in free], axis=1)
    weight = np.ones_like(r)
    for _ in range(60):
        sw = np.sqrt(weight) / np.abs(y)
        coef, *_ = np.linalg.lstsq(basis * sw[:, None], (y - base) * sw, rcond=None)
        err = np.abs((base + basis @ coef) / y - 1)
        weight *= err
        weight /= weight.sum()
    out = dict(fixed)
    out.update(zip(free, coef))
    return out


def fit(f, a, b, center, degree, fixed=None):
    """float32 coefficients on [a, b] in r = t - center, and the largest
    relative error of their float32 evaluation."""
    fixed = dict(fixed or {})
    half = (b - a) / 2
    r = np.cos(np.linspace(0.0, np.pi, 4001)) * half + ((a + b) / 2 - center)
    if center == 0:
        r = r[r != 0]  # f(0) = 0: the relative error is undefined at t = 0
    y = f(center + r)
    for i in range(degree + 1):
        if i not in fixed:
            fixed[i] = float(np.float32(near_minimax(r, y, degree, fixed)[i]))
    coefficients = [fixed[i] for i in range(degree + 1)]
    t = np.linspace(a, b, 50001).astype(np.float32)
    t = t[(t > 0) & (t >= a) & (t <= b)]
    rr = (t - np.float32(center)).astype(np.float64)
    p = np.full_like(rr, coefficients[degree])
    for c in reversed(coefficients[:degree]):
        p = (p * rr + c).astype(np.float32).astype(np.float64)
    error = float(np.max(np.abs(p / f(t.astype(np.float64)) - 1)))
    return coefficients, error


def table(name, f, intervals, degree, extra, zero_at_origin=False):
    centers, rows, worst = [], [], 0.0
    for a, b in intervals:
        center = 0.0 if (zero_at_origin and a == 0) else (a + b) / 2
        assert float(np.float32(center)) == center
        coefficients, error = fit(f, a, b, center, degree, {0: 0.0} if center == 0 else None)
        centers.append(center)
        rows.append(coefficients)
        worst = max(worst, error)
    while len(centers) < ENTRIES:  # unused entries repeat the last interval
        centers.append(centers[-1])
        rows.append(rows[-1])
    fmt = lambda v: f"{float(np.float32(v))!r}f"
    lines = [f"namespace {name} {{", "", f"inline constexpr int kDegree = {degree};",
             f"// Largest relative error of the float32 evaluation: {worst:.3g} ({worst / 2.0**-24:.2f} x 2^-24).",
             f"alignas(64) inline constexpr float kCenter[{ENTRIES}] = {{"]
    lines += [f"    {', '.join(fmt(c) for c in centers[i:i + 4])}," for i in range(0, ENTRIES, 4)]
    lines += ["};", "// kCoefficient[j][i]: the coefficient of r^j on interval i.",
              f"alignas(64) inline constexpr float kCoefficient[kDegree + 1][{ENTRIES}] = {{"]
    for j in range(degree + 1):
        lines.append("    {")
        lines += [f"        {', '.join(fmt(row[j]) for row in rows[i:i + 4])}," for i in range(0, ENTRIES, 4)]
        lines.append("    },")
    lines += ["};"] + extra + ["", f"}}  // namespace {name}", ""]
    return "\n".join(lines)


def main() -> None:
    w = sys.stdout.write
    w("// Generated by tools/fit-activation-tables.py; do not edit (its docstring\n")
    w("// describes the intervals). Used by src/cpu/activation-inl.h.\n")
    w("#pragma once\n\nnamespace hetkern {\nnamespace cpu {\n\n")
    clamp = float(np.nextafter(np.float32(15), np.float32(0)))
    w("// erf-GELU: S(t) = erfcx(t / sqrt 2) / 2 = Phi(-t) e^(t^2/2), t in [0, 15).\n")
    w(table("normal_cdf_table", lambda t: 0.5 * scipy.special.erfcx(t / np.sqrt(2.0)),
            normal_cdf_intervals(), 4,
            ["// Largest float32 below 15: t + 1 stays below 16, the last interval's end.",
             f"inline constexpr float kClamp = {clamp!r}f;"]))
    w("\n// tanh(t), t in [0, 10] (tanh(10) rounds to 1).\n")
    w(table("tanh_table", tanh_rounding_to_one, tanh_intervals(), 5,
            ["inline constexpr float kClamp = 10.0f;",
             f"inline constexpr int kLastInterval = {len(tanh_intervals()) - 1};"],
            zero_at_origin=True))
    w("}  // namespace cpu\n}  // namespace hetkern\n")


if __name__ == "__main__":
    main()
