// The two costly steps of the transcendental CPU kernels, made cheap where
// the target allows it without changing what callers may rely on:
//
// * Exponential(Minus1): Highway's Exp (Expm1). On AVX3, float32 gets the
//   same reduction and polynomial with the final scaling by 2^k done by one
//   vscalefps instead of integer exponent arithmetic and two multiplies:
//   ~15 instead of ~25 instructions per vector.
// * DivBounded(a, b): a / b for b in [1, 2^64]. On Intel's AVX-512 cores
//   vdivps is not pipelined (one zmm division per ~10 cycles, more than a
//   whole memory-bound element budget); with FMA, a reciprocal estimate
//   refined by Newton and a residual correction gives the quotient to within
//   0.5 ulp + 2^-40 relative, i.e. the correctly rounded one but for
//   near-ties. AMD Zen 4 divides faster than that sequence (sigmoid 0.35 vs
//   0.46 ns per element, docs/performance.md), so AVX3_ZEN4 (the target of
//   Zen 4/5) keeps Highway's Div, and so does AVX2, where a ymm division
//   runs on its own unit beside the FMA pipes: Zen 3 (EPYC Milan, AVX2 its
//   best target), float32, 1 thread, sigmoid 1.10-1.44 -> 0.89-1.09 ns per
//   value, gelu 1.94-2.20 -> 1.61-1.91; Sapphire Rapids forced to AVX2,
//   two runs, one each way (sigmoid 1.18 -> 1.23, 1.15 -> 0.90).
//
// Highway 1.3's contrib Exp/Expm1/Tanh are 1.0.3's algorithms. Below AVX3
// and for float64 we use them; on AVX3 float32 the vscalefps versions stay,
// faster at the same accuracy (exp 0.29 vs 0.40 ns per element on Zen 4).

#if defined(HETKERN_CPU_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HETKERN_CPU_MATH_INL_H_
#undef HETKERN_CPU_MATH_INL_H_
#else
#define HETKERN_CPU_MATH_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

// Whether DivBounded divides (vdivps) rather than refining a reciprocal.
#undef HETKERN_HWY_DIVIDE
#if HWY_TARGET == HWY_AVX3_ZEN4 || HWY_TARGET == HWY_AVX2 || !HWY_NATIVE_FMA
#define HETKERN_HWY_DIVIDE 1
#else
#define HETKERN_HWY_DIVIDE 0
#endif

// vscalefps (AVX-512F, and AVX-512VL for the 128/256-bit tail vectors).
#undef HETKERN_HWY_SCALEF
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define HETKERN_HWY_SCALEF 1
#else
#define HETKERN_HWY_SCALEF 0
#endif

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HETKERN_HWY_SCALEF
// v * 2^floor(k), rounded once (subnormal and infinite results included).
template <size_t N>
HWY_INLINE hn::Vec128<float, N> Scalef(hn::Vec128<float, N> v, hn::Vec128<float, N> k) {
  return hn::Vec128<float, N>{_mm_scalef_ps(v.raw, k.raw)};
}
HWY_INLINE hn::Vec256<float> Scalef(hn::Vec256<float> v, hn::Vec256<float> k) {
  return hn::Vec256<float>{_mm256_scalef_ps(v.raw, k.raw)};
}
HWY_INLINE hn::Vec512<float> Scalef(hn::Vec512<float> v, hn::Vec512<float> k) {
  return hn::Vec512<float>{_mm512_scalef_ps(v.raw, k.raw)};
}
#endif

#if HETKERN_HWY_SCALEF
// Highway's float32 exp polynomial: e^r - 1 for |r| <= ln 2 / 2.
template <class D>
HWY_INLINE hn::Vec<D> ExpOfReduced(D d, hn::Vec<D> r) {
  return hn::MulAdd(
      hn::impl::Estrin(r, hn::Set(d, +0.5f), hn::Set(d, +0.166666671633720397949219f),
                       hn::Set(d, +0.0416664853692054748535156f),
                       hn::Set(d, +0.00833336077630519866943359f),
                       hn::Set(d, +0.00139304355252534151077271f),
                       hn::Set(d, +0.000198527617612853646278381f)),
      hn::Mul(r, r), r);
}

// Highway's reduction: v = k ln 2 + r, |r| <= ln 2 / 2 (ln 2 in two parts);
// sets k (a float holding an integer), returns r. k comes from the 1.5 * 2^23
// rounding trick rather than a truncating conversion; the two differ only
// where v / ln 2 is within a rounding of a half-integer, and either k is a
// valid reduction there.
template <class D>
HWY_INLINE hn::Vec<D> ExpReduction(D d, hn::Vec<D> v, hn::Vec<D>* k) {
  const auto magic = hn::Set(d, 12582912.0f);
  *k = hn::Sub(hn::MulAdd(v, hn::Set(d, 1.442695040888963407359924681f), magic), magic);
  const auto r = hn::MulAdd(*k, hn::Set(d, -0.693145751953125f), v);
  return hn::MulAdd(*k, hn::Set(d, -1.428606765330187045e-6f), r);
}

// e^r - 1 and k with v = k ln 2 + r.
template <class D>
HWY_INLINE hn::Vec<D> ExpReduced(D d, hn::Vec<D> v, hn::Vec<D>* k) {
  return ExpOfReduced(d, ExpReduction(d, v, k));
}

// e^(-(hi + lo) / 2) for hi + lo = t^2 (the exact square, split), hi <= 225:
// lo joins the reduced argument, whose rounding it then shares, so the
// result carries no rounding of t^2. e^r = 1 + r + r^2 P(r) with P of degree
// 4 (minimax of the relative error, float32 coefficients, 1.19 x 2^-24
// evaluated in float32; Horner: two operations fewer than ExpOfReduced's
// degree 5 by Estrin). Subnormal results are rounded once; 0 below ~-104
// (hi > 208).
template <class D>
HWY_INLINE hn::Vec<D> GaussianOfSquare(D d, hn::Vec<D> hi, hn::Vec<D> lo) {
  hn::Vec<D> k;
  const auto half = hn::Set(d, -0.5f);
  const auto r = hn::MulAdd(lo, half, ExpReduction(d, hn::Mul(hi, half), &k));
  auto p = hn::Set(d, 0.0013819487066939473f);
  p = hn::MulAdd(p, r, hn::Set(d, 0.008368687704205513f));
  p = hn::MulAdd(p, r, hn::Set(d, 0.041668280959129333f));
  p = hn::MulAdd(p, r, hn::Set(d, 0.1666652113199234f));
  p = hn::MulAdd(p, r, hn::Set(d, 0.4999999403953552f));
  return Scalef(hn::Add(hn::MulAdd(p, hn::Mul(r, r), r), hn::Set(d, 1.0f)), k);
}
#endif

// e^v with Highway's Exp contract: valid (1 ulp) up to 88.72 (float32) /
// 706 (float64), 0 below -104 / -1000 and for NaN, subnormal results in
// between.
template <class D>
HWY_INLINE hn::Vec<D> Exponential(D d, hn::Vec<D> v) {
#if HETKERN_HWY_SCALEF
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    hn::Vec<D> k;
    const auto em1 = ExpReduced(d, v, &k);
    // Below -104 (and for NaN, -inf) Highway returns 0; so do we.
    return hn::IfThenElseZero(hn::Ge(v, hn::Set(d, -104.0f)),
                              Scalef(hn::Add(em1, hn::Set(d, 1.0f)), k));
  }
#endif
  return hn::Exp(d, v);
}

// e^t for t <= 0 (t = x - max of a softmax row), accurate enough for a
// result rounded to bfloat16 or float16 but cheaper than Exponential: 2^y
// with y = t log2(e) rounded once, split as n + f (n an integer, |f| <= 1/2),
// 2^f from a degree-5 polynomial fitted for relative error (2.3e-7 evaluated
// in float32), times 2^n, rounded once, subnormal results included. The
// relative error is at most ~2.3e-7 + |t| 2^-24 (the rounding of y), far
// below half a 16-bit ulp (2^-12 float16, 2^-9 bfloat16). e^0 = 1 exactly;
// -inf and t below ~-104 give 0, as does NaN on x86 (callers settle NaN rows
// apart). 10 instructions a vector on AVX3 (vscalefps), 14 elsewhere,
// against Exponential's ~15 and ~25.
template <class D>
HWY_INLINE hn::Vec<D> ExpNonPositiveFor16Bit(D d, hn::Vec<D> t) {
  static_assert(sizeof(hn::TFromD<D>) == 4, "float32 only");
  // Clamps -inf (and, on x86, NaN): 2^-151 p rounds to 0.
  const auto y = hn::Max(hn::Mul(t, hn::Set(d, 1.442695040888963407359924681f)), hn::Set(d, -151.0f));
  const auto n = hn::Round(y);
  const auto f = hn::Sub(y, n);
  auto p = hn::Set(d, 0.0013202981790527701f);
  p = hn::MulAdd(p, f, hn::Set(d, 0.009674952365458012f));
  p = hn::MulAdd(p, f, hn::Set(d, 0.055510472506284714f));
  p = hn::MulAdd(p, f, hn::Set(d, 0.24022166430950165f));
  p = hn::MulAdd(p, f, hn::Set(d, 0.6931465864181519f));
  p = hn::MulAdd(p, f, hn::Set(d, 1.0f));
#if HETKERN_HWY_SCALEF
  return Scalef(p, n);
#else
  // 2^(n + 64) is normal for n in [-151, 63]: p times it is exact, and the
  // multiply by 2^-64 rounds once, into the subnormal range where it must.
  const hn::RebindToSigned<D> di;
  const auto scale = hn::BitCast(
      d, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127 + 64))));
  return hn::Mul(hn::Mul(p, scale), hn::Set(d, 0x1.0p-64f));
#endif
}

// e^v - 1 with Highway's Expm1 contract (4 ulp, valid up to 88.72 / 706,
// -1 below -104 / -1000), the same way.
template <class D>
HWY_INLINE hn::Vec<D> ExponentialMinus1(D d, hn::Vec<D> v) {
#if HETKERN_HWY_SCALEF
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    hn::Vec<D> k;
    const auto em1 = ExpReduced(d, v, &k);
    const auto one = hn::Set(d, 1.0f);
    const auto z = hn::IfThenElse(hn::Lt(hn::Abs(v), hn::Set(d, 0.346573590279972654708616f)), em1,
                                  hn::Sub(Scalef(hn::Add(em1, one), k), one));
    return hn::IfThenElse(hn::Lt(v, hn::Set(d, -104.0f)), hn::Neg(one), z);
  }
#endif
  return hn::Expm1(d, v);
}

// a / b for b in [1, 2^64] (finite, normal reciprocal) and any a, NaN and
// infinities included. Within 0.5 ulp + 2^-40 relative of a / b with FMA
// (the residual a - b q is then exact); plain division without FMA, for
// float64, and on AVX3_ZEN4 (HETKERN_HWY_DIVIDE).
template <class D>
HWY_INLINE hn::Vec<D> DivBounded(D d, hn::Vec<D> a, hn::Vec<D> b) {
  if constexpr (sizeof(hn::TFromD<D>) == 4 && !HETKERN_HWY_DIVIDE) {
    const auto one = hn::Set(d, 1.0f);
    auto r = hn::ApproximateReciprocal(b);               // 2^-12 (AVX3: 2^-14)
    r = hn::MulAdd(r, hn::NegMulAdd(b, r, one), r);      // Newton: 2^-23
    const auto q = hn::Mul(a, r);
    // q - r (b q - a), not q + r (a - b q): keeps the sign of a zero q.
    const auto fixed = hn::NegMulAdd(r, hn::MulSub(b, q, a), q);  // ~2^-46
    // a = +-inf: the residual is inf - inf; q = a * r is the quotient.
    return hn::IfThenElse(hn::IsInf(q), q, fixed);
  } else {
    return hn::Div(a, b);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_MATH_INL_H_
