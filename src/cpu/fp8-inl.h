// float8_e4m3fn output of the quant norms on every Highway target: clamp to
// +-448 (NaN passes) and the float32 -> e4m3fn steps of src/core/fp8.h in
// vector form, bit-equal to torch's `.to(torch.float8_e4m3fn)`
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

// v clamped to [-448, 448]; NaN stays NaN (comparisons with NaN are false,
// whereas Min/Max would pick an operand, differently per target).
template <class D>
HWY_INLINE hn::Vec<D> ClampToE4M3Range(D d, hn::Vec<D> v) {
  const auto max = hn::Set(d, static_cast<hn::TFromD<D>>(kE4M3Max));
  v = hn::IfThenElse(hn::Gt(v, max), max, v);
  return hn::IfThenElse(hn::Lt(v, hn::Neg(max)), hn::Neg(max), v);
}

// float32 lanes -> e4m3fn bits in the low byte of each uint32 lane: the
// steps of F32ToE4M3Bits, all three computed and selected per lane.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> F32ToE4M3Lanes(DF df, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  const auto bits = hn::BitCast(du, v);
  const auto sign = hn::And(bits, hn::Set(du, 0x80000000u));
  const auto abs = hn::Xor(bits, sign);
  const auto magic = hn::Set(du, kE4M3DenormMagic);
  const auto subnormal =
      hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(df, abs), hn::BitCast(df, magic))), magic);
  const auto mantissa_odd = hn::And(hn::ShiftRight<20>(abs), hn::Set(du, 1u));
  const auto normal =
      hn::ShiftRight<20>(hn::Add(hn::Add(abs, hn::Set(du, kE4M3RebiasRound)), mantissa_odd));
  // abs < 2^31, so signed comparisons of the bit patterns order them.
  const hn::RebindToSigned<DF> di;
  const auto abs_i = hn::BitCast(di, abs);
  auto result = hn::IfThenElse(
      hn::RebindMask(du, hn::Lt(abs_i, hn::Set(di, static_cast<int32_t>(kE4M3MinNormal)))),
      subnormal, normal);
  result = hn::IfThenElse(
      hn::RebindMask(du, hn::Ge(abs_i, hn::Set(di, static_cast<int32_t>(kE4M3NanThreshold)))),
      hn::Set(du, 0x7fu), result);
  return hn::Or(result, hn::ShiftRight<24>(sign));
}

// Stores e4m3fn(clamp(v)) for the Lanes(d) values of v (float32, or float64
// rounded to float32 first, as torch converts float64 through float).
template <class D>
HWY_INLINE void StoreE4M3(D d, hn::Vec<D> v, uint8_t* HWY_RESTRICT out) {
  const auto clamped = ClampToE4M3Range(d, v);
  if constexpr (hwy::IsSame<hn::TFromD<D>, double>()) {
    const hn::Rebind<float, D> df;
    const auto bits = F32ToE4M3Lanes(df, hn::DemoteTo(df, clamped));
    const hn::Rebind<uint8_t, D> d8;
    hn::StoreU(hn::TruncateTo(d8, bits), d8, out);
  } else {
    const auto bits = F32ToE4M3Lanes(d, clamped);
    const hn::Rebind<uint8_t, D> d8;
    hn::StoreU(hn::TruncateTo(d8, bits), d8, out);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_FP8_INL_H_
