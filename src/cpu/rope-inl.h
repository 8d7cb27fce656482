// Loads and stores of rope's CPU kernel beyond convert-inl.h: interleaved
// pairs (GPT-J layout) in any storage type, and cos/sin cache rows that may be
// float32 under float64 compute.

#if defined(HETKERN_CPU_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HETKERN_CPU_ROPE_INL_H_
#undef HETKERN_CPU_ROPE_INL_H_
#else
#define HETKERN_CPU_ROPE_INL_H_
#endif

#include <stdint.h>

#include <hwy/highway.h>

#include "src/cpu/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// x, y = the even and odd elements of the 2 * Lanes(d) storage elements at p.
template <class D, class T>
HWY_INLINE void LoadPairsAs(D d, const T* HWY_RESTRICT p, hn::Vec<D>& x, hn::Vec<D>& y) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    hn::LoadInterleaved2(d, p, x, y);
  } else {
    const hn::Rebind<uint16_t, D> du16;
    hn::Vec<decltype(du16)> x_bits, y_bits;
    hn::LoadInterleaved2(du16, HalfBits(p), x_bits, y_bits);
    x = HalfBitsToCompute<T>(d, x_bits);
    y = HalfBitsToCompute<T>(d, y_bits);
  }
}

// Inverse of LoadPairsAs: stores x0, y0, x1, y1, ... as storage type T.
template <class D, class T>
HWY_INLINE void StorePairsAs(hn::Vec<D> x, hn::Vec<D> y, D d, T* HWY_RESTRICT p) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    hn::StoreInterleaved2(x, y, d, p);
  } else {
    const hn::Rebind<uint16_t, D> du16;
    hn::StoreInterleaved2(ComputeToHalfBits<T>(d, x), ComputeToHalfBits<T>(d, y), du16, HalfBits(p));
  }
}

// Lanes(d) cache values as compute vectors; the cache is the storage type of
// the query or float32 (promoted exactly when computing in float64).
template <class D, class TC>
HWY_INLINE hn::Vec<D> LoadCacheAs(D d, const TC* HWY_RESTRICT p) {
  if constexpr (hwy::IsSame<TC, float>() && hwy::IsSame<hn::TFromD<D>, double>()) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), p));
  } else {
    return LoadAs(d, p);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_ROPE_INL_H_
