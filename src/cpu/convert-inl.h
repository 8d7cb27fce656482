// Loading storage types as their compute type and storing back with IEEE
// round-to-nearest-even, on every Highway target.
//
// float16/bfloat16 are computed in float32 (as torch does); float32 and
// float64 in themselves. The integer conversions below were written for
// Highway 1.0.3, whose DemoteTo(f16) truncated and PromoteTo(f16) made inf
// and NaN finite on targets without F16C, and whose DemoteTo(bf16)
// truncated everywhere. Highway 1.3's emulations round to nearest even too;
// ours stay because the exhaustive tests prove them bit-equal to torch on
// every target (subnormals, NaN payloads), and the F16C path (AVX2 and up)
// is Highway's own PromoteTo/DemoteTo.
// On AVX512-BF16 targets (AVX3_ZEN4, AVX3_SPR) float32 -> bfloat16 is the
// native vcvtneps2bf16, which rounds to nearest even and quietens NaN as we
// do but flushes subnormal inputs to zero: a vector holding one falls back
// to our integer rounding (one vfpclassps and a predicted branch per vector).

// Per-target include guard (see hwy/highway.h): toggles with HWY_TARGET_TOGGLE.
#if defined(HETKERN_CPU_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HETKERN_CPU_CONVERT_INL_H_
#undef HETKERN_CPU_CONVERT_INL_H_
#else
#define HETKERN_CPU_CONVERT_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <hwy/highway.h>

#include "src/core/args.h"  // DType, VisitDType

// Whether the current target converts f16 in hardware (F16C), correctly.
#undef HETKERN_HWY_F16C
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define HETKERN_HWY_F16C 1
#else
#define HETKERN_HWY_F16C 0
#endif

// Whether the current target narrows float32 to bfloat16 natively
// (AVX512-BF16). The Highway macro is redefined by every x86 target's ops
// header only, hence the target check: EMU128 would see a stale value.
#undef HETKERN_HWY_BF16C
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_ZEN4 && HWY_AVX3_HAVE_F32_TO_BF16C
#define HETKERN_HWY_BF16C 1
#else
#define HETKERN_HWY_BF16C 0
#endif

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Calls fn(TypeTag<T>{}) with T the CPU storage type of `dtype` (the CUDA
// side's VisitCudaType).
template <class Fn>
HWY_INLINE void VisitCpuType(DType dtype, Fn&& fn) {
  VisitDType<float, double, hwy::float16_t, hwy::bfloat16_t>(dtype, fn);
}

// The type arithmetic happens in for storage type T.
template <class T>
struct ComputeTypeOf {
  using type = float;
};
template <>
struct ComputeTypeOf<double> {
  using type = double;
};
template <class T>
using ComputeType = typename ComputeTypeOf<T>::type;

// float16 bits -> float32, exact for every input (subnormals, inf, NaN).
template <class DF>
HWY_INLINE hn::Vec<DF> F16BitsToF32(DF df, hn::Vec<hn::Rebind<uint16_t, DF>> h16) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto h = hn::PromoteTo(du, h16);
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
  const auto magnitude_bits = hn::And(h, hn::Set(du, 0x7FFFu));
  // Exponent field moved to the float's and biased by 224; scaling by 2^-112
  // brings normals to their value and keeps inf and NaN (exponent all ones).
  const auto normal = hn::Mul(
      hn::BitCast(df, hn::Add(hn::ShiftLeft<13>(magnitude_bits), hn::Set(du, 0x70000000u))),
      hn::Set(df, 0x1.0p-112f));
  // Subnormals and zero: mantissa * 2^-24, exactly.
  const auto subnormal =
      hn::Mul(hn::ConvertTo(df, hn::BitCast(di, magnitude_bits)), hn::Set(df, 0x1.0p-24f));
  const auto is_subnormal = hn::RebindMask(
      df, hn::Lt(hn::BitCast(di, magnitude_bits), hn::Set(di, 0x0400)));
  const auto magnitude = hn::IfThenElse(is_subnormal, subnormal, normal);
  return hn::BitCast(df, hn::Or(hn::BitCast(du, magnitude), sign));
}

// float32 -> float16 bits, round to nearest even, overflow to inf, NaN stays
// NaN (quietened, payload truncated, as F16C does). Branch-free: the rounding
// is done by one float add whose exponent places the f16 mantissa LSB at the
// float's LSB (the method of Maratyszcza's FP16 library, also used by c10).
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> F32ToF16Bits(DF df, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(du, v);
  const auto sign16 = hn::ShiftRight<16>(hn::And(bits, hn::Set(du, 0x80000000u)));
  // |v| * 2^112 * 2^-110: overflows to inf exactly when the f16 would.
  const auto magnitude = hn::Mul(hn::Mul(hn::Abs(v), hn::Set(df, 0x1.0p+112f)),
                                 hn::Set(df, 0x1.0p-110f));
  // Exponent of the rounding bias: max(exponent(v), 113 = f16 min normal).
  const auto exponent = hn::BitCast(
      di, hn::ShiftRight<23>(hn::And(bits, hn::Set(du, 0x7F800000u))));
  const auto bias_exponent = hn::BitCast(du, hn::Max(exponent, hn::Set(di, 0x71)));
  const auto bias = hn::BitCast(
      df, hn::Add(hn::ShiftLeft<23>(bias_exponent), hn::Set(du, 0x07800000u)));
  const auto rounded = hn::BitCast(du, hn::Add(bias, magnitude));
  const auto f16_exponent = hn::And(hn::ShiftRight<13>(rounded), hn::Set(du, 0x7C00u));
  const auto f16_mantissa = hn::And(rounded, hn::Set(du, 0x0FFFu));
  const auto finite = hn::Add(f16_exponent, f16_mantissa);
  const auto nan = hn::Or(hn::Set(du, 0x7E00u),
                          hn::And(hn::ShiftRight<13>(bits), hn::Set(du, 0x03FFu)));
  const auto magnitude16 = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), nan, finite);
  const hn::Rebind<uint16_t, DF> du16;
  return hn::DemoteTo(du16, hn::BitCast(di, hn::Or(sign16, magnitude16)));
}

// float32 bits whose upper half is v rounded to bfloat16 (nearest even;
// NaN stays NaN, quietened) and whose lower half is to be discarded.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> BF16InUpperHalf(DF df, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  const auto bits = hn::BitCast(du, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded = hn::Add(bits, hn::Add(lsb, hn::Set(du, 0x7FFFu)));
  const auto quiet_nan = hn::Or(bits, hn::Set(du, 0x00400000u));
  (void)df;
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet_nan, rounded);
}

#if HETKERN_HWY_BF16C
// Lanes holding a nonzero subnormal float32 (vfpclassps, category 0x20).
template <size_t N>
HWY_INLINE hn::Mask128<float, N> IsSubnormal(hn::Vec128<float, N> v) {
  return hn::Mask128<float, N>{_mm_fpclass_ps_mask(v.raw, 0x20)};
}
HWY_INLINE hn::Mask256<float> IsSubnormal(hn::Vec256<float> v) {
  return hn::Mask256<float>{_mm256_fpclass_ps_mask(v.raw, 0x20)};
}
HWY_INLINE hn::Mask512<float> IsSubnormal(hn::Vec512<float> v) {
  return hn::Mask512<float>{_mm512_fpclass_ps_mask(v.raw, 0x20)};
}
#endif

// Whether storage type T narrows with that check (bfloat16 on AVX512-BF16
// targets): only there does a caller gain by proving it unneeded.
template <class T>
constexpr bool kNarrowsNatively = HETKERN_HWY_BF16C && hwy::IsSame<T, hwy::bfloat16_t>();

// float32 -> bfloat16 bits, round to nearest even; NaN stays NaN (quietened).
// kNoSubnormals: the caller has proven that no lane of v is subnormal (e.g.
// for a whole row, norm.cc), which saves the check below.
template <bool kNoSubnormals = false, class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> F32ToBF16Bits(DF df, hn::Vec<DF> v) {
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> du16;
#if HETKERN_HWY_BF16C
  // vcvtneps2bf16 treats subnormal inputs as zero; they are rare (below
  // 2^-126), so a vector with any takes the exact integer path below.
  if (kNoSubnormals || HWY_LIKELY(hn::AllFalse(df, IsSubnormal(v)))) {
    return hn::BitCast(du16, hn::DemoteTo(hn::Rebind<hwy::bfloat16_t, DF>(), v));
  }
#endif
  return hn::DemoteTo(du16, hn::BitCast(di, hn::ShiftRight<16>(BF16InUpperHalf(df, v))));
}

// v rounded to bfloat16 (nearest even, NaN quietened), as float32.
template <bool kNoSubnormals = false, class DF>
HWY_INLINE hn::Vec<DF> RoundedToBF16(DF df, hn::Vec<DF> v) {
#if HETKERN_HWY_BF16C
  // Narrowing natively and widening (a shift) beats the integer rounding.
  return hn::PromoteTo(df, hn::BitCast(hn::Rebind<hwy::bfloat16_t, DF>(),
                                       F32ToBF16Bits<kNoSubnormals>(df, v)));
#else
  // Clearing the lower half rounds in place: no narrowing and widening.
  const hn::RebindToUnsigned<DF> du;
  return hn::BitCast(df, hn::And(BF16InUpperHalf(df, v), hn::Set(du, 0xFFFF0000u)));
#endif
}

// 16-bit storage type T, as raw bits, <-> float32 compute vectors (exact
// widening; narrowing rounds to nearest even). The loads and stores below
// and rope's (de-)interleaving move 16-bit lanes as integers and convert
// with these.
template <class T, class D>
HWY_INLINE hn::Vec<D> HalfBitsToCompute(D d, hn::Vec<hn::Rebind<uint16_t, D>> bits) {
  static_assert(hwy::IsSame<T, hwy::float16_t>() || hwy::IsSame<T, hwy::bfloat16_t>(),
                "storage type must be the compute type or a 16-bit float");
  if constexpr (hwy::IsSame<T, hwy::bfloat16_t>() || HETKERN_HWY_F16C) {
    return hn::PromoteTo(d, hn::BitCast(hn::Rebind<T, D>(), bits));  // exact
  } else {
    return F16BitsToF32(d, bits);
  }
}

template <class T, bool kNoSubnormals = false, class D>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, D>> ComputeToHalfBits(D d, hn::Vec<D> v) {
  static_assert(hwy::IsSame<T, hwy::float16_t>() || hwy::IsSame<T, hwy::bfloat16_t>(),
                "storage type must be the compute type or a 16-bit float");
  if constexpr (hwy::IsSame<T, hwy::bfloat16_t>()) {
    return F32ToBF16Bits<kNoSubnormals>(d, v);
  } else if constexpr (HETKERN_HWY_F16C) {
    // vcvtps2ph rounds to nearest even.
    return hn::BitCast(hn::Rebind<uint16_t, D>(), hn::DemoteTo(hn::Rebind<T, D>(), v));
  } else {
    return F32ToF16Bits(d, v);
  }
}

template <class T>
HWY_INLINE const uint16_t* HalfBits(const T* p) {
  return reinterpret_cast<const uint16_t*>(p);
}
template <class T>
HWY_INLINE uint16_t* HalfBits(T* p) {
  return reinterpret_cast<uint16_t*>(p);
}

// Loads Lanes(d) elements of storage type T from p as compute vectors.
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadAs(D d, const T* HWY_RESTRICT p) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    return hn::LoadU(d, p);
  } else {
    return HalfBitsToCompute<T>(d, hn::LoadU(hn::Rebind<uint16_t, D>(), HalfBits(p)));
  }
}

// Stores the compute vector v as Lanes(d) elements of storage type T
// (kNoSubnormals: as F32ToBF16Bits).
template <bool kNoSubnormals = false, class D, class T>
HWY_INLINE void StoreAs(hn::Vec<D> v, D d, T* HWY_RESTRICT p) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    hn::StoreU(v, d, p);
  } else {
    hn::StoreU(ComputeToHalfBits<T, kNoSubnormals>(d, v), hn::Rebind<uint16_t, D>(), HalfBits(p));
  }
}

// Whether StorePairAs narrows two float32 vectors with one instruction:
// bfloat16 on AVX512-BF16 targets, whose full vectors are 512 bits.
template <class T>
constexpr bool kNarrowsInPairs = kNarrowsNatively<T> && HWY_MAX_BYTES == 64;

// Stores compute vectors a then b as 2 * Lanes(d) elements of T at p. Where
// kNarrowsInPairs<T>, one vcvtne2ps2bf16 narrows both (lanes of a, then of
// b) and one 64-byte store writes them, instead of two narrowings and two
// stores (Zen 4, 1 thread: bfloat16 scale of 1M elements 90.5 -> 72.0 us,
// docs/performance.md "Stop 40"); a pair holding a subnormal takes
// StoreAs's exact path, as F32ToBF16Bits does.
template <class D, class T>
HWY_INLINE void StorePairAs(hn::Vec<D> a, hn::Vec<D> b, D d, T* HWY_RESTRICT p) {
#if HETKERN_HWY_BF16C
  if constexpr (kNarrowsInPairs<T> && hwy::IsSame<hn::Vec<D>, hn::Vec512<float>>()) {
    if (HWY_LIKELY(hn::AllFalse(d, hn::Or(IsSubnormal(a), IsSubnormal(b))))) {
      const hn::Repartition<uint16_t, D> du16;
      // The intrinsic, not Highway's ReorderDemote2To, whose lane order is
      // unspecified: stores need a's lanes, then b's.
      const __m512i both = hn::detail::BitCastToInteger(_mm512_cvtne2ps_pbh(b.raw, a.raw));
      hn::StoreU(hn::Vec<decltype(du16)>{both}, du16, HalfBits(p));
      return;
    }
  }
#endif
  StoreAs(a, d, p);
  StoreAs(b, d, p + hn::Lanes(d));
}

// 2 * Lanes(d) bfloat16 values split by parity: `even` holds elements 0, 2,
// 4, ... as float32 lanes, `odd` elements 1, 3, 5, .... Widening is then a
// shift and a mask of each 32-bit word, with no lane crossing (LoadAs widens
// with vpmovzxwd, which crosses lanes). Lane-wise arithmetic on split pairs
// gives the lanes' results in the same split, and SplitPairBits puts them
// back in element order. The norms' row loops use them where
// kNarrowsInPairs<bfloat16> (Zen 4, 1 thread, rmsnorm of bfloat16 rows of
// 4096: 0.173 -> 0.120 ns an element, docs/performance.md "Stop 41"), and
// bfloat16 sum and dot on 512-bit targets (reduce.cc, kSplitGroups).
template <class D>
struct SplitPair {
  hn::Vec<D> even, odd;
};

// The split of 2 * Lanes(d) bfloat16 bits held as uint32 words (element 2j
// in the lower half of word j, 2j + 1 in the upper: little-endian).
template <class D>
HWY_INLINE SplitPair<D> SplitWords(D d, hn::Vec<hn::RebindToUnsigned<D>> words) {
  const hn::RebindToUnsigned<D> du;
  return {hn::BitCast(d, hn::ShiftLeft<16>(words)),
          hn::BitCast(d, hn::And(words, hn::Set(du, 0xFFFF0000u)))};
}

template <class D>
HWY_INLINE SplitPair<D> LoadSplitPair(D d, const hwy::bfloat16_t* HWY_RESTRICT p) {
  const hn::RebindToUnsigned<D> du;
  return SplitWords(d, hn::LoadU(du, reinterpret_cast<const uint32_t*>(p)));
}

// The bfloat16 bits of a split pair, rounded to nearest even, in element
// order (as uint32 words: see SplitWords). Where kNarrowsInPairs, one
// vcvtne2ps2bf16 narrows both halves (evens, then odds) and one vpermw
// interleaves them, unless a lane is subnormal (the instruction flushes it)
// and kNoSubnormals does not rule that out: such a pair, and every pair on
// other targets, rounds exactly in the integer unit (BF16InUpperHalf).
template <bool kNoSubnormals = false, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> SplitPairBits(D d, const SplitPair<D>& v) {
  const hn::RebindToUnsigned<D> du;
#if HETKERN_HWY_BF16C
  if constexpr (kNarrowsInPairs<hwy::bfloat16_t> && hwy::IsSame<hn::Vec<D>, hn::Vec512<float>>()) {
    if (kNoSubnormals ||
        HWY_LIKELY(hn::AllFalse(d, hn::Or(IsSubnormal(v.even), IsSubnormal(v.odd))))) {
      const __m512i halves = hn::detail::BitCastToInteger(_mm512_cvtne2ps_pbh(v.odd.raw, v.even.raw));
      // Word k of the result is word k / 2 (even k) or 16 + k / 2 of halves.
      const __m512i interleave =
          _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                           6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
      return hn::Vec<decltype(du)>{_mm512_permutexvar_epi16(interleave, halves)};
    }
  }
#endif
  return hn::Or(hn::And(BF16InUpperHalf(d, v.odd), hn::Set(du, 0xFFFF0000u)),
                hn::ShiftRight<16>(BF16InUpperHalf(d, v.even)));
}

// v rounded to bfloat16 and widened back (RoundedToBF16 of both halves).
template <bool kNoSubnormals = false, class D>
HWY_INLINE SplitPair<D> RoundedToBF16(D d, const SplitPair<D>& v) {
  return SplitWords(d, SplitPairBits<kNoSubnormals>(d, v));
}

template <bool kNoSubnormals = false, class D>
HWY_INLINE void StoreSplitPair(D d, const SplitPair<D>& v, hwy::bfloat16_t* HWY_RESTRICT p) {
  const hn::RebindToUnsigned<D> du;
  hn::StoreU(SplitPairBits<kNoSubnormals>(d, v), du, reinterpret_cast<uint32_t*>(p));
}

#if HETKERN_HWY_BF16C
// Stores v rounded to bfloat16 at p (as StoreSplitPair) and returns the
// stored values widened in element order: elements [0, Lanes(d)), then
// [Lanes(d), 2 Lanes(d)) (StoreRounded for a split pair; where
// kNarrowsInPairs only: a Half of the vector must exist).
template <class D>
HWY_INLINE void StoreRoundedInOrder(D d, const SplitPair<D>& v, hwy::bfloat16_t* HWY_RESTRICT p,
                                    hn::Vec<D>& first, hn::Vec<D>& second) {
  const hn::Repartition<uint16_t, D> du16;
  const hn::Half<decltype(du16)> dh16;
  const auto bits = hn::BitCast(du16, SplitPairBits(d, v));
  hn::StoreU(bits, du16, HalfBits(p));
  first = HalfBitsToCompute<hwy::bfloat16_t>(d, hn::LowerHalf(dh16, bits));
  second = HalfBitsToCompute<hwy::bfloat16_t>(d, hn::UpperHalf(dh16, bits));
}
#endif

// Tails (Highway's LoadN/StoreN): the first `count` (<= Lanes(d)) elements
// only; nothing past them is read or written. LoadNAs fills the other lanes
// with zero, LoadNOrAs with the lanes of `no` (a value T represents exactly).
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadNAs(D d, const T* HWY_RESTRICT p, size_t count) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    return hn::LoadN(d, p, count);
  } else {
    return HalfBitsToCompute<T>(d, hn::LoadN(hn::Rebind<uint16_t, D>(), HalfBits(p), count));
  }
}

template <class D, class T>
HWY_INLINE hn::Vec<D> LoadNOrAs(hn::Vec<D> no, D d, const T* HWY_RESTRICT p, size_t count) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    return hn::LoadNOr(no, d, p, count);
  } else {
    const hn::Rebind<uint16_t, D> du16;
    return HalfBitsToCompute<T>(d, hn::LoadNOr(ComputeToHalfBits<T>(d, no), du16, HalfBits(p), count));
  }
}

template <class D, class T>
HWY_INLINE void StoreNAs(hn::Vec<D> v, D d, T* HWY_RESTRICT p, size_t count) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    hn::StoreN(v, d, p, count);
  } else {
    hn::StoreN(ComputeToHalfBits<T>(d, v), hn::Rebind<uint16_t, D>(), HalfBits(p), count);
  }
}

// How a loop body reads and writes the vector at its index, so that one body
// serves the full vectors (FullVector: LoadAs/StoreAs) and the tail
// (PartialVector: the first `count` lanes, LoadNAs/StoreNAs). The lanes of a
// partial vector past `count` hold zeros; lane-wise arithmetic on them is
// harmless, and they are never stored.
struct FullVector {
  template <class D, class T>
  HWY_INLINE hn::Vec<D> Load(D d, const T* HWY_RESTRICT p) const {
    return LoadAs(d, p);
  }
  template <class D, class T>
  HWY_INLINE void Store(hn::Vec<D> v, D d, T* HWY_RESTRICT p) const {
    StoreAs(v, d, p);
  }
};

struct PartialVector {
  size_t count;
  template <class D, class T>
  HWY_INLINE hn::Vec<D> Load(D d, const T* HWY_RESTRICT p) const {
    return LoadNAs(d, p, count);
  }
  template <class D, class T>
  HWY_INLINE void Store(hn::Vec<D> v, D d, T* HWY_RESTRICT p) const {
    StoreNAs(v, d, p, count);
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_CONVERT_INL_H_
