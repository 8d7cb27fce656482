// Vectorised activation functions (relu, sigmoid, silu, gelu, tanh, exp) and
// the loop of the gated activations, for every Highway target.
//
// Accuracy first where it is cheap: sigmoid/silu/gelu are written so that no
// 1 + (something close to -1) cancellation happens in the negative tail (as
// it does in torch's formulas), and exp is guarded outside the range Highway's
// Exp is valid for. docs/activation.md lists the measured errors.

#if defined(HETKERN_CPU_ACTIVATION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HETKERN_CPU_ACTIVATION_INL_H_
#undef HETKERN_CPU_ACTIVATION_INL_H_
#else
#define HETKERN_CPU_ACTIVATION_INL_H_
#endif

#include <stddef.h>

#include <cmath>
#include <iterator>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "src/core/args.h"
#include "src/core/normal_cdf.h"
#include "src/cpu/convert-inl.h"
#include "src/cpu/elementwise-inl.h"
#include "src/cpu/math-inl.h"
#include "src/cpu/activation-tables.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// NaN lanes of x stay NaN in r (Highway's Exp maps NaN to 0).
template <class V>
HWY_INLINE V KeepNaN(V x, V r) {
  return hn::IfThenElse(hn::IsNaN(x), x, r);
}

// e^v for v <= 0 (or NaN, which gives 0): Exponential (math-inl.h), valid there; it
// returns subnormal results and 0 below the underflow threshold.
template <class D>
HWY_INLINE hn::Vec<D> ExpNonPositive(D d, hn::Vec<D> v) {
  return Exponential(d, v);
}

// e^v for any v but NaN: +inf above the overflow threshold, where Highway's
// Exp (valid up to 104 / 706 only) would wrap its integer exponent.
template <class D>
HWY_INLINE hn::Vec<D> ExpOrInf(D d, hn::Vec<D> v) {
  using T = hn::TFromD<D>;
  // Largest v with e^v finite: ln(FLT_MAX) resp. ln(DBL_MAX), rounded down.
  const T max_log = sizeof(T) == 4 ? static_cast<T>(88.72283f) : static_cast<T>(709.782712893384);
  const auto big = hn::Gt(v, hn::Set(d, max_log));
  return hn::IfThenElse(big, hn::Set(d, static_cast<T>(INFINITY)), Exponential(d, hn::Min(v, hn::Set(d, max_log))));
}

template <class D>
HWY_INLINE hn::Vec<D> Relu(D d, hn::Vec<D> x) {
  // x < 0 ? 0 : x, so relu(NaN) = NaN and relu(-0) = -0, as torch.
  return hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
}

template <class D>
HWY_INLINE hn::Vec<D> ExpActivation(D d, hn::Vec<D> x) {
  return KeepNaN(x, ExpOrInf(d, x));
}

#if HETKERN_HWY_SCALEF
// The polynomial of each lane's interval i at t (src/cpu/activation-tables.h):
// sum over j of coefficient[j][i] (t - center[i])^j, Horner's order. Each
// coefficient of the 32 intervals sits in two registers; one vpermt2ps reads
// every lane's.
template <int kDegree, class D>
HWY_INLINE hn::Vec<D> IntervalPolynomial(D d, hn::Vec<D> t, const hn::Indices512<float>& interval,
                                         const float (&center)[32],
                                         const float (&coefficient)[kDegree + 1][32]) {
  const auto lookup = [&](const float* entries) HWY_ATTR {
    return hn::TwoTablesLookupLanes(d, hn::Load(d, entries), hn::Load(d, entries + 16), interval);
  };
  const auto r = hn::Sub(t, lookup(center));
  auto p = lookup(coefficient[kDegree]);
  for (int j = kDegree - 1; j >= 0; --j) p = hn::MulAdd(p, r, lookup(coefficient[j]));
  return p;
}

// tanh in float32 on 16-lane AVX-512 vectors: sign(x) p(|x|), p from
// src/cpu/activation-tables.h (30 polynomials of degree 5 over [0, 10],
// read by vpermt2ps; the one on [0, 1/16) has no constant term, so that
// tanh(x) ~ x keeps its relative accuracy): no exponential, no division.
template <class D>
HWY_INLINE hn::Vec<D> TanhTable(D d, hn::Vec<D> x) {
  namespace table = tanh_table;
  using V = hn::Vec<D>;
  const hn::RebindToSigned<D> di;
  // vminps returns its second operand where one is NaN: NaN stays NaN (here
  // and in the final Min).
  const V t = hn::Min(hn::Set(d, table::kClamp), hn::Abs(x));
  const auto quarter_binade = hn::Sub(hn::ShiftRight<21>(hn::BitCast(di, t)), hn::Set(di, 123 * 4 - 1));
  const auto interval = hn::IndicesFromVec(
      d, hn::Min(hn::Max(quarter_binade, hn::Zero(di)), hn::Set(di, table::kLastInterval)));
  const V p = IntervalPolynomial<table::kDegree>(d, t, interval, table::kCenter, table::kCoefficient);
  return hn::CopySignToAbs(hn::Min(hn::Set(d, 1.0f), p), x);
}
#endif

// Highway's Tanh, sign(x) (e - 1) / (e + 1) with e - 1 = expm1(2|x|) and 1
// beyond 18.7, with its exp and division replaced by math-inl.h's (the
// divisor e + 1 <= e^37.4 where the quotient is used). 16-lane AVX-512
// float32 vectors take TanhTable.
template <class D>
HWY_INLINE hn::Vec<D> TanhActivation(D d, hn::Vec<D> x) {
#if HETKERN_HWY_SCALEF
  if constexpr (hn::MaxLanes(d) == 16 && sizeof(hn::TFromD<D>) == 4) return TanhTable(d, x);
#endif
  using T = hn::TFromD<D>;
  const auto two = hn::Set(d, T(2));
  const auto sign = hn::And(hn::SignBit(d), x);
  const auto abs_x = hn::Xor(x, sign);
  const auto y = ExponentialMinus1(d, hn::Mul(abs_x, two));
  const auto z = hn::IfThenElse(hn::Gt(abs_x, hn::Set(d, T(18.714973875))), hn::Set(d, T(1)),
                                DivBounded(d, y, hn::Add(y, two)));
  return KeepNaN(x, hn::Xor(z, sign));
}

// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0, with e = e^-|x|
// in (0, 1]: no overflow, and tiny results (down to subnormals) stay accurate
// where torch's 1 / (1 + e^-x) flushes them to 0.
template <class D>
HWY_INLINE hn::Vec<D> Sigmoid(D d, hn::Vec<D> x) {
  const auto one = hn::Set(d, 1);
  const auto e = ExpNonPositive(d, hn::Neg(hn::Abs(x)));
  const auto numerator = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, one);
  return KeepNaN(x, DivBounded(d, numerator, hn::Add(one, e)));
}

// x * sigmoid(z) = x / (1 + e^-z). For z < 0 that is x * e / (1 + e) with
// e = e^z; e = h * h with h = e^(z/2), and the numerator is (x * h) * h,
// which stays normal until the final product: silu(-100) = -3.7e-42 keeps its
// digits instead of inheriting the rounding of a subnormal e^-100 times 100,
// and x / (1 + e^-z) does not overflow to -0 where the result is still normal.
template <class D>
HWY_INLINE hn::Vec<D> XSigmoid(D d, hn::Vec<D> x, hn::Vec<D> z) {
  const auto h = ExpNonPositive(d, hn::Mul(hn::Abs(z), hn::Set(d, static_cast<hn::TFromD<D>>(-0.5))));
  const auto numerator = hn::IfThenElse(hn::Lt(z, hn::Zero(d)), hn::Mul(hn::Mul(x, h), h), x);
  return DivBounded(d, numerator, hn::MulAdd(h, h, hn::Set(d, 1)));
}

// silu(-inf) = -inf * 0 = NaN, as torch (whose formula gives -inf / inf).
template <class D>
HWY_INLINE hn::Vec<D> Silu(D d, hn::Vec<D> x) {
  return KeepNaN(x, XSigmoid(d, x, x));
}

#if HETKERN_HWY_SCALEF
// GELU's x * Phi(x) in float32 on 16-lane AVX-512 vectors: Q = Phi(-|x|) =
// e^(-x^2/2) S(|x|), S from src/cpu/activation-tables.h (32 polynomials of
// degree 4, their coefficients held in pairs of registers and read by
// vpermt2ps: no division, no second branch), then x * Phi = (x S) e^(-x^2/2)
// for x <= 0 (the Gaussian factor last, so that only the result can be
// subnormal) and x - (x S) e^(-x^2/2) for x > 0. docs/activation.md
// gives the measured error; the formula below (XNormalCdf) serves the other
// targets and CUDA.
template <class D>
HWY_INLINE hn::Vec<D> XNormalCdfTable(D d, hn::Vec<D> x) {
  namespace table = normal_cdf_table;
  using V = hn::Vec<D>;
  const hn::RebindToSigned<D> di;
  const V t = hn::Min(hn::Abs(x), hn::Set(d, table::kClamp));  // NaN -> kClamp
  // The interval: exponent and top three mantissa bits of t + 1 in [1, 16).
  const auto interval = hn::IndicesFromVec(
      d, hn::Sub(hn::ShiftRight<20>(hn::BitCast(di, hn::Add(t, hn::Set(d, 1.0f)))), hn::Set(di, 127 << 3)));
  const V s = IntervalPolynomial<table::kDegree>(d, t, interval, table::kCenter, table::kCoefficient);
  const V sq_hi = hn::Mul(t, t);
  const V gauss = GaussianOfSquare(d, sq_hi, hn::MulSub(t, t, sq_hi));
  // x clamped above as t is, so that gelu(+inf) = inf - finite * 0; x <= 0
  // stays as it is (gelu(-inf) = -inf * 0 = NaN, as torch; gelu(-0) = -0).
  const V xs = hn::Mul(hn::Min(x, hn::Set(d, table::kClamp)), s);
  return hn::IfThenElse(hn::Le(x, hn::Zero(d)), hn::Mul(xs, gauss), hn::NegMulAdd(xs, gauss, x));
}
#endif

// GELU's x * Phi(x) in float32: src/core/normal_cdf.h gives the formula
// and its coefficients (shared with the CUDA kernels); docs/activation.md the
// measured error. x^2 is split exactly into hi + lo (Veltkamp: exact with or
// without FMA) and e^(-x^2/2) = e^(-hi/2) * (1 - lo/2). 16-lane AVX-512
// vectors take XNormalCdfTable.
template <class D, hwy::EnableIf<sizeof(hn::TFromD<D>) == 4>* = nullptr>
HWY_INLINE hn::Vec<D> XNormalCdf(D d, hn::Vec<D> x) {
#if HETKERN_HWY_SCALEF
  if constexpr (hn::MaxLanes(d) == 16) return XNormalCdfTable(d, x);
#endif
  using V = hn::Vec<D>;
  const V t = hn::Abs(x);

  const V s = hn::Mul(x, x);
  V p = hn::Set(d, normal_cdf::kCentral[0]);
  for (size_t i = 1; i < std::size(normal_cdf::kCentral); ++i) {
    p = hn::MulAdd(p, s, hn::Set(d, normal_cdf::kCentral[i]));
  }
  const V central = hn::Mul(x, hn::MulAdd(x, p, hn::Set(d, 0.5f)));

  const V tc = hn::Min(t, hn::Set(d, normal_cdf::kTailClamp));
  const V sq_hi = hn::Mul(tc, tc);
#if HWY_NATIVE_FMA
  const V sq_lo = hn::MulSub(tc, tc, sq_hi);  // exact: one rounding of an exact value
#else
  const V split = hn::Mul(tc, hn::Set(d, 4097.0f));  // 2^12 + 1
  const V t_hi = hn::Sub(split, hn::Sub(split, tc));
  const V t_lo = hn::Sub(tc, t_hi);
  const V sq_lo = hn::Add(
      hn::Add(hn::Sub(hn::Mul(t_hi, t_hi), sq_hi), hn::Mul(hn::Add(t_hi, t_hi), t_lo)),
      hn::Mul(t_lo, t_lo));
#endif
  const V gauss = hn::Mul(ExpNonPositive(d, hn::Mul(sq_hi, hn::Set(d, -0.5f))),
                          hn::MulAdd(sq_lo, hn::Set(d, -0.5f), hn::Set(d, 1.0f)));
  const V u = DivBounded(d, hn::Set(d, 1.0f),
                         hn::MulAdd(tc, hn::Set(d, normal_cdf::kTailSlope), hn::Set(d, 1.0f)));
  V r = hn::Set(d, normal_cdf::kTail[0]);
  for (size_t i = 1; i < std::size(normal_cdf::kTail); ++i) {
    r = hn::MulAdd(r, u, hn::Set(d, normal_cdf::kTail[i]));
  }
  const V ur = hn::Mul(u, r);
  const V tail = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(hn::Mul(x, ur), gauss),
                                hn::Mul(x, hn::Sub(hn::Set(d, 1.0f), hn::Mul(gauss, ur))));

  return hn::IfThenElse(hn::Le(t, hn::Set(d, normal_cdf::kCentralBound)), central, tail);
}

// float64: x * erfc(-x / sqrt 2) / 2 lane by lane with libm (glibc's
// erfc is < 1 ulp); the rounding of x / sqrt 2 costs relative 2 z^2 2^-53,
// below 1e-13 wherever Phi is normal. Not vectorised: float64 GELU is rare.
template <class D, hwy::EnableIf<sizeof(hn::TFromD<D>) == 8>* = nullptr>
HWY_INLINE hn::Vec<D> XNormalCdf(D d, hn::Vec<D> x) {
  HWY_ALIGN double lanes[hn::MaxLanes(d)];
  hn::Store(x, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) {
    lanes[i] = lanes[i] * (0.5 * std::erfc(lanes[i] * -0.70710678118654752440));
  }
  return hn::Load(d, lanes);
}

// GELU, erf form: x * Phi(x). gelu(-inf) = -inf * 0 = NaN, as torch;
// gelu(+inf) = +inf (torch's CPU kernel returns NaN there).
template <class D>
HWY_INLINE hn::Vec<D> Gelu(D d, hn::Vec<D> x) {
  return XNormalCdf(d, x);
}

// GELU, tanh form: x/2 (1 + tanh(k0 (x + k1 x^3))) = x * sigmoid(2 k0 (x + k1 x^3)),
// the same function without torch's cancellation in 1 + tanh for x < 0.
// gelu(-inf) = NaN and gelu(+inf) = inf, as torch.
template <class D>
HWY_INLINE hn::Vec<D> GeluTanh(D d, hn::Vec<D> x) {
  using T = hn::TFromD<D>;
  constexpr double k0 = 0.7978845608028654;  // sqrt(2 / pi)
  constexpr double k1 = 0.044715;
  const auto c1 = hn::Set(d, static_cast<T>(2 * k0));
  const auto c3 = hn::Set(d, static_cast<T>(2 * k0 * k1));
  const auto z = hn::Mul(x, hn::MulAdd(c3, hn::Mul(x, x), c1));
  return KeepNaN(x, XSigmoid(d, x, z));
}

// The functor MapUnary and MapGated apply: act(v) on compute-type vectors.
template <Activation kAct>
struct ActivationOp {
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> v) const {
    if constexpr (kAct == Activation::kRelu) return Relu(d, v);
    if constexpr (kAct == Activation::kSigmoid) return Sigmoid(d, v);
    if constexpr (kAct == Activation::kSilu) return Silu(d, v);
    if constexpr (kAct == Activation::kGelu) return Gelu(d, v);
    if constexpr (kAct == Activation::kGeluTanh) return GeluTanh(d, v);
    if constexpr (kAct == Activation::kTanh) return TanhActivation(d, v);
    if constexpr (kAct == Activation::kExp) return ExpActivation(d, v);
  }
};

// out[i] = op(d, gate[i]) * up[i] for i in [0, n), in the compute type and
// rounded once.
template <class T, class Op>
HWY_INLINE void MapGated(const T* gate, const T* up, T* out, size_t n, const Op& op) {
  MapVectors(out, n, [&](auto d, size_t i, auto io) HWY_ATTR {
    PrefetchAhead(gate + i);
    PrefetchAhead(up + i);
    PrefetchAhead<1>(out + i);
    return hn::Mul(op(d, io.Load(d, gate + i)), io.Load(d, up + i));
  });
}

// ---- Table lookups of 16-bit activations (src/cpu/activation.cc builds the
// tables by running the kernels above over all 65536 bit patterns, so a lookup
// gives the same bits as computing) ----

// Whether lookups use vector gathers (x86 AVX2 and up: 8 or 16 entries per
// vpgatherdd) or one load per entry (other targets, whose gathers Highway
// emulates with the same loads).
#undef HETKERN_HWY_GATHER
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define HETKERN_HWY_GATHER 1
#else
#define HETKERN_HWY_GATHER 0
#endif

// Entries of a 16-bit table: one per bit pattern, plus 2 of padding so that
// the 32-bit gather lane of the last pattern stays inside the table.
constexpr size_t kHalfPatterns = 65536;
constexpr size_t kHalfTableEntries = kHalfPatterns + 2;

// out[i] = table[x[i]] for i in [0, n) (16-bit patterns); out may equal x.
// Gathering: each vector of 16-bit patterns becomes two vectors of byte
// offsets 2 * x; a 32-bit gather at each offset holds the entry in its lower
// half (little endian), which the narrowing keeps.
HWY_INLINE void LookupHalf(const uint16_t* HWY_RESTRICT table, const uint16_t* x, uint16_t* out,
                           size_t n) {
  size_t i = 0;
#if HETKERN_HWY_GATHER
  const hn::ScalableTag<uint16_t> d16;
  const hn::Repartition<int32_t, decltype(d16)> di32;
  const hn::RebindToUnsigned<decltype(di32)> du32;
  const int32_t* base = reinterpret_cast<const int32_t*>(table);
  const auto gather = [&](hn::Vec<decltype(du32)> patterns) HWY_ATTR {
    return hn::BitCast(du32, hn::GatherOffset(di32, base, hn::BitCast(di32, hn::ShiftLeft<1>(patterns))));
  };
  const size_t lanes = hn::Lanes(d16);
  for (; i + lanes <= n; i += lanes) {
    PrefetchAhead(x + i);
    PrefetchAhead<1>(out + i);
    const auto patterns = hn::LoadU(d16, x + i);
    const auto lower = gather(hn::PromoteLowerTo(du32, patterns));
    const auto upper = gather(hn::PromoteUpperTo(du32, patterns));
    hn::StoreU(hn::OrderedTruncate2To(d16, lower, upper), d16, out + i);
  }
#endif
  for (; i < n; ++i) out[i] = table[x[i]];
}

// The float32 entries of `act_table` at the first `count` (or Lanes(d)) 16-bit
// patterns at p; the other lanes hold any entry.
template <class D>
HWY_INLINE hn::Vec<D> LookupFloats(D d, const float* HWY_RESTRICT act_table,
                                   const uint16_t* HWY_RESTRICT p, size_t count) {
#if HETKERN_HWY_GATHER
  const hn::Rebind<uint16_t, D> d16;
  const hn::RebindToSigned<D> di32;
  // LoadN fills the lanes past count with pattern 0: a valid index.
  const auto patterns = count >= hn::Lanes(d) ? hn::LoadU(d16, p) : hn::LoadN(d16, p, count);
  return hn::GatherIndex(d, act_table, hn::PromoteTo(di32, patterns));
#else
  HWY_ALIGN float entries[hn::MaxLanes(d)] = {};
  for (size_t j = 0; j < HWY_MIN(count, hn::Lanes(d)); ++j) entries[j] = act_table[p[j]];
  return hn::Load(d, entries);
#endif
}

// MapGated with act(gate) read from `act_table` (float32, one entry per
// 16-bit pattern of the gate) instead of computed: the same product of the
// same float32 values, rounded once, so the same bits.
template <class T>
HWY_INLINE void MapGatedLookup(const float* HWY_RESTRICT act_table, const T* gate, const T* up,
                               T* out, size_t n) {
  static_assert(sizeof(T) == 2, "gate tables exist for 16-bit types only");
  MapVectors(out, n, [&](auto d, size_t i, auto io) HWY_ATTR {
    PrefetchAhead(gate + i);
    PrefetchAhead(up + i);
    PrefetchAhead<1>(out + i);
    const auto act = LookupFloats(d, act_table, HalfBits(gate + i), n - i);
    return hn::Mul(act, io.Load(d, up + i));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_ACTIVATION_INL_H_
