// Row loops of the normalisation kernels: a reduction over a row with a fixed
// summation order, a map over a row, and rounding a compute vector through
// the storage type (vLLM rounds its intermediate x * rstd to the storage type).

#if defined(HETKERN_CPU_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HETKERN_CPU_NORM_INL_H_
#undef HETKERN_CPU_NORM_INL_H_
#else
#define HETKERN_CPU_NORM_INL_H_
#endif

#include <stddef.h>

#include <hwy/highway.h>

#include "src/cpu/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// v rounded to storage type T (nearest even) and widened back, without a
// trip through memory; the identity when T is the compute type
// (kNoSubnormals: as F32ToBF16Bits).
template <class T, bool kNoSubnormals = false, class D>
HWY_INLINE hn::Vec<D> RoundThrough(D d, hn::Vec<D> v) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    return v;
  } else if constexpr (hwy::IsSame<T, hwy::bfloat16_t>()) {
    return RoundedToBF16<kNoSubnormals>(d, v);
  } else if constexpr (HETKERN_HWY_F16C) {
    static_assert(hwy::IsSame<T, hwy::float16_t>(), "unsupported storage type");
    return hn::PromoteTo(d, hn::DemoteTo(hn::Rebind<T, D>(), v));
  } else {
    static_assert(hwy::IsSame<T, hwy::float16_t>(), "unsupported storage type");
    return F16BitsToF32(d, F32ToF16Bits(d, v));
  }
}

// Stores v rounded to storage type T at p and returns the stored value in
// the compute type: StoreAs and RoundThrough in one, converting once (the
// same bits as RoundThrough<T>(d, v), which a store would convert again).
template <class T, class D>
HWY_INLINE hn::Vec<D> StoreRounded(D d, hn::Vec<D> v, T* HWY_RESTRICT p) {
  if constexpr (hwy::IsSame<T, hn::TFromD<D>>()) {
    hn::StoreU(v, d, p);
    return v;
  } else {
    const auto bits = ComputeToHalfBits<T>(d, v);
    hn::StoreU(bits, hn::Rebind<uint16_t, D>(), HalfBits(p));
    return HalfBitsToCompute<T>(d, bits);
  }
}

// ReduceRow with the blocks' vectors taken two at a time: pair(d, i, acc_a,
// acc_b) folds vector [i, i + Lanes(d)) into acc_a and the next into acc_b,
// as two calls of step would (the same sums, in the same order); step serves
// the leftover vectors and the tail.
template <class C, class PairStep, class Step>
HWY_INLINE C ReduceRowInPairs(size_t n, const PairStep& pair, const Step& step) {
  const hn::ScalableTag<C> d;
  const size_t lanes = hn::Lanes(d);
  auto acc0 = hn::Zero(d), acc1 = hn::Zero(d), acc2 = hn::Zero(d), acc3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    pair(d, i, acc0, acc1);
    pair(d, i + 2 * lanes, acc2, acc3);
  }
  for (; i + lanes <= n; i += lanes) acc0 = step(d, i, acc0);
  const hn::CappedTag<C, 1> d1;
  auto tail = hn::Zero(d1);
  for (; i < n; ++i) tail = step(d1, i, tail);
  const auto sum = hn::Add(hn::Add(acc0, acc1), hn::Add(acc2, acc3));
  return hn::GetLane(hn::SumOfLanes(d, sum)) + hn::GetLane(tail);
}

// Folds acc = step(d, i, acc) over [0, n) and returns the sum of the lanes.
// `step` handles elements [i, i + Lanes(d)); it is called with a full-width
// tag and, for the tail, with a 1-lane tag. Summation order (fixed for a
// given n and SIMD target): four vector accumulators over blocks of 4
// vectors, leftover full vectors into the first, the four added pairwise and
// reduced across lanes, then the tail's own 1-lane sum added last.
template <class C, class Step>
HWY_INLINE C ReduceRow(size_t n, const Step& step) {
  return ReduceRowInPairs<C>(
      n,
      [&](auto d, size_t i, auto& acc_a, auto& acc_b) HWY_ATTR {
        acc_a = step(d, i, acc_a);
        acc_b = step(d, i + hn::Lanes(d), acc_b);
      },
      step);
}

// Calls fn(d, i) for elements [i, i + Lanes(d)) covering [begin, n): full
// vectors, then the tail with a 1-lane tag, so one body serves both.
template <class C, class Fn>
HWY_INLINE void MapRow(size_t begin, size_t n, const Fn& fn) {
  const hn::ScalableTag<C> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = begin;
  for (; i + lanes <= n; i += lanes) fn(d, i);
  const hn::CappedTag<C, 1> d1;
  for (; i < n; ++i) fn(d1, i);
}

template <class C, class Fn>
HWY_INLINE void MapRow(size_t n, const Fn& fn) {
  MapRow<C>(0, n, fn);
}

// Calls pair(d, i) for elements [i, i + 2 Lanes(d)) while two full vectors
// fit in [0, n) (a split pair's worth, convert-inl.h), and returns where
// the pairs end: MapRow goes on from there.
template <class C, class PairFn>
HWY_INLINE size_t ForEachPairOfVectors(size_t n, const PairFn& pair) {
  const hn::ScalableTag<C> d;
  const size_t step = 2 * hn::Lanes(d);
  size_t i = 0;
  for (; i + step <= n; i += step) pair(d, i);
  return i;
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_NORM_INL_H_
