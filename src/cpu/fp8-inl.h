// float8_e4m3fn output of the quant norms on every Highway target: the
// division by the scale, then clamp to +-448 (NaN passes) and the float32 ->
// e4m3fn conversion, the bits of src/core/fp8.h's F32ToE4M3Bits and so of
// torch's `.to(torch.float8_e4m3fn)`
// (tests/test_norm_quant.py proves it near every e4m3 boundary, on every
// target this CPU runs).

// Per-target include guard (see hwy/highway.h): toggles with HWY_TARGET_TOGGLE.
#if defined(HETKERN_CPU_FP8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HETKERN_CPU_FP8_INL_H_
#undef HETKERN_CPU_FP8_INL_H_
#else
#define HETKERN_CPU_FP8_INL_H_
#endif

#include <stdint.h>

#include <hwy/highway.h>

#include "src/core/fp8.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// float32 lanes -> e4m3fn(clamp(v, -448, 448)) in the low byte of each
// uint32 lane (the bytes above it are not zero): F32ToE4M3Bits's result in
// 12 vector operations instead of its three computed paths (22), the float
// adder doing the rounding for normals and subnormals alike. The magnitude
// comes from v, the sign and NaN-ness from `sign_of` (v itself, or the
// dividend of QuantDivisor's quotient).
//  - The clamp is an unsigned min on |v|'s bits: inf and NaN become 448;
//    NaN sign_of lanes then take 0x7f.
//  - For |v| = a with exponent e, the e4m3 step is 2^(max(e, -6) - 3), so
//    adding magic = 2^(max(e, -6) + 20) (whose ulp is that step) rounds a to
//    the e4m3 grid by the FPU's round-to-nearest-even, carries included, and
//    leaves the step count k <= 16 in the sum's low mantissa bits: the sum's
//    bits are (max(e, -6) + 147) << 23 | k.
//  - The code is k + 8 (max(e, -6) + 6). The sum plus the sum shifted right
//    by 20 is, in its low byte, c + k + 8 (max(e, -6) + 147), where c is a
//    count of ulps added to magic (c + k < 2^20 keeps them below the
//    exponent, and ulps of the grid round a no differently); c = 152 makes
//    it the code modulo 256.
// tools/check-fp8-cpu.cc compares it with F32ToE4M3Bits on all 2^32 float32
// bit patterns; the tests do so near every e4m3 boundary on every target.
// kMayBeNaN = false: the caller knows no sign_of lane is NaN, and the NaN
// select (2 of the 12 operations) is left out.
template <bool kMayBeNaN = true, class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> F32ToE4M3Lanes(DF df, hn::Vec<DF> v, hn::Vec<DF> sign_of) {
  const hn::RebindToUnsigned<DF> du;
  const auto abs = hn::And(hn::BitCast(du, v), hn::Set(du, 0x7fffffffu));
  const auto clamped = hn::Min(abs, hn::Set(du, hwy::BitCastScalar<uint32_t>(kE4M3Max)));
  const auto exponent = hn::Max(hn::And(clamped, hn::Set(du, 0x7f800000u)), hn::Set(du, kE4M3MinNormal));
  const auto magic = hn::Add(exponent, hn::Set(du, (20u << 23) + 152u));
  const auto sum = hn::BitCast(du, hn::Add(hn::BitCast(df, clamped), hn::BitCast(df, magic)));
  auto code = hn::Add(sum, hn::ShiftRight<20>(sum));
  if constexpr (kMayBeNaN) {
    code = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(sign_of)), hn::Set(du, 0x7fu), code);
  }
  return hn::BitwiseIfThenElse(hn::Set(du, 0x80u), hn::ShiftRight<24>(hn::BitCast(du, sign_of)), code);
}

// Stores e4m3fn(clamp(v)) for the Lanes(d) float32 values of v, with the
// sign and NaN-ness of sign_of (F32ToE4M3Lanes).
template <bool kMayBeNaN = true, class DF>
HWY_INLINE void StoreE4M3(DF df, hn::Vec<DF> v, hn::Vec<DF> sign_of, uint8_t* HWY_RESTRICT out) {
  const hn::Rebind<uint8_t, DF> d8;
  hn::StoreU(hn::TruncateTo(d8, F32ToE4M3Lanes<kMayBeNaN>(df, v, sign_of)), d8, out);
}

// Stores e4m3fn(clamp(v)) for the 2 Lanes(d) values of a split pair
// (convert-inl.h: elements 2j in even's lane j, 2j + 1 in odd's), in element
// order: each 32-bit word takes its even code in the low byte and its odd
// code in the next, and the words narrow to 16 bits, one narrowing and one
// store for both vectors.
template <bool kMayBeNaN = true, class DF>
HWY_INLINE void StoreE4M3Pair(DF df, hn::Vec<DF> even, hn::Vec<DF> even_sign_of, hn::Vec<DF> odd,
                              hn::Vec<DF> odd_sign_of, uint8_t* HWY_RESTRICT out) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<uint16_t, DF> d16;
  const auto even_codes = F32ToE4M3Lanes<kMayBeNaN>(df, even, even_sign_of);
  const auto odd_codes = F32ToE4M3Lanes<kMayBeNaN>(df, odd, odd_sign_of);
  const auto codes = hn::BitwiseIfThenElse(hn::Set(du, 0xFFu), even_codes, hn::ShiftLeft<8>(odd_codes));
  hn::StoreU(hn::TruncateTo(d16, codes), d16, reinterpret_cast<uint16_t*>(out));
}

// Stores e4m3fn(clamp(v)) for the Lanes(d) values of v (float32, or float64
// rounded to float32 first, as torch converts float64 through float; the
// clamp commutes with that rounding, 448 being a float).
template <bool kMayBeNaN = true, class D>
HWY_INLINE void StoreE4M3(D d, hn::Vec<D> v, uint8_t* HWY_RESTRICT out) {
  if constexpr (hwy::IsSame<hn::TFromD<D>, double>()) {
    const hn::Rebind<float, D> df;
    const auto narrowed = hn::DemoteTo(df, v);
    StoreE4M3<kMayBeNaN>(df, narrowed, narrowed, out);
  } else {
    StoreE4M3<kMayBeNaN>(d, v, v, out);
  }
}

// The quant ops' output stage: e4m3fn(clamp(y / scale)) with y / scale the
// correctly rounded quotient (torch's `y / scale`). On targets with a fused
// multiply-add and for scale in [2^-64, 2^64], by the argument of
// src/cuda/quant_scale.cuh: q0 = RN(y r) with r = RN(1 / scale), the exact
// remainder, and one Markstein correction, the step that
// tools/check-quant-division.cu proves exact for every pair of significands
// (where 2^-11 <= |y / scale| < 1024; smaller quotients stay below half the
// smallest e4m3 subnormal, larger ones clamp). Three FMA-unit operations
// instead of a vector division (AVX3_SPR, the write pass of bfloat16 rows in
// cache: 0.25 -> 0.23 ns a value, benchmarks/results/cpu-2026-12-06-stop56).
// Where q0 overflows (and for y = +-inf) the step gives NaN, which the
// conversion's clamp turns into 448: its sign and NaN-ness are y's, the
// quotient's for a positive scale. The remainder is taken negated
// (q0 scale - y), so that an exact zero, +0, enters the correction as
// -0 * r = -0, which leaves q0's bits alone (-0 + -0 = -0), where CUDA rounds
// it toward -inf. A division for the rest: float64, other scales, targets
// whose MulAdd is not fused, and AVX3_ZEN4, whose division measured faster
// than the step (stop 34, docs/performance.md).
template <class C>
struct QuantDivisor {
  static constexpr bool kMayMultiply =
      HWY_NATIVE_FMA && HWY_TARGET != HWY_AVX3_ZEN4 && hwy::IsSame<C, float>();
  C scale;
  C reciprocal;
  bool by_reciprocal;

  explicit QuantDivisor(C s)
      : scale(s), reciprocal(C(1) / s), by_reciprocal(kMayMultiply && s >= C(0x1p-64) && s <= C(0x1p64)) {}

  // y / scale, the correctly rounded quotient where 2^-11 <= |y / scale| <
  // 1024 (elsewhere, the value the output stage clamps and rounds).
  template <class D>
  HWY_INLINE hn::Vec<D> Quotient(D d, hn::Vec<D> y) const {
    if constexpr (kMayMultiply) {
      if (by_reciprocal) {
        const auto r = hn::Set(d, reciprocal);
        const auto q0 = hn::Mul(y, r);
        const auto negated_remainder = hn::MulSub(q0, hn::Set(d, scale), y);
        return hn::NegMulAdd(negated_remainder, r, q0);
      }
    }
    return hn::Div(y, hn::Set(d, scale));
  }

  // Stores e4m3fn(clamp(y / scale)). kMayBeNaN = false: the caller knows
  // that no y is NaN and that the scale is finite and nonzero, so that no
  // quotient is NaN either.
  template <bool kMayBeNaN = true, class D>
  HWY_INLINE void Store(D d, hn::Vec<D> y, uint8_t* HWY_RESTRICT out) const {
    if constexpr (kMayMultiply) {
      if (by_reciprocal) return StoreE4M3<kMayBeNaN>(d, Quotient(d, y), y, out);  // sign and NaN of y
    }
    StoreE4M3<kMayBeNaN>(d, Quotient(d, y), out);
  }

  // The same for a split pair of float32 y (StoreE4M3Pair).
  template <bool kMayBeNaN = true, class DF>
  HWY_INLINE void StorePair(DF df, hn::Vec<DF> y_even, hn::Vec<DF> y_odd, uint8_t* HWY_RESTRICT out) const {
    const auto even = Quotient(df, y_even), odd = Quotient(df, y_odd);
    if constexpr (kMayMultiply) {
      if (by_reciprocal) return StoreE4M3Pair<kMayBeNaN>(df, even, y_even, odd, y_odd, out);
    }
    StoreE4M3Pair<kMayBeNaN>(df, even, even, odd, odd, out);
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_FP8_INL_H_
