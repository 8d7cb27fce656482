// Elementwise loops shared by the elementwise CPU kernels: read storage types,
// apply a functor on compute-type vectors, write the storage type back.

#if defined(HETKERN_CPU_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HETKERN_CPU_ELEMENTWISE_INL_H_
#undef HETKERN_CPU_ELEMENTWISE_INL_H_
#else
#define HETKERN_CPU_ELEMENTWISE_INL_H_
#endif

#include <stddef.h>
#include <stdint.h>

#include <hwy/highway.h>

#include "src/cpu/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Software prefetch distance of the streaming loops. The hardware prefetcher
// alone lets heavy loops (exp, division: ~15-30 instructions per vector)
// reach only 0.3-0.8 of copy bandwidth, as the out-of-order window then
// spans too few cache lines; requesting lines kPrefetchBytes ahead brings
// them to ~copy speed (AVX3, 1 thread: f32 sigmoid 0.77 -> 1.0 of copy).
constexpr uintptr_t kPrefetchBytes = 4096;

// Whether the light streaming loops (a few instructions a vector: scale,
// the binary ops, axpby, relu, the reductions) prefetch too. Not on Zen 4 (AVX3_ZEN4), whose
// hardware prefetcher keeps up with them, so the requests only took issue
// slots (1 thread, float32 scale: 256K 27.9-30.4 -> 23.2-23.5 us, NumPy
// 23.2-27.8; 16M 6.6-9.6 -> 6.1-7.0 ms, NumPy 5.3-6.9; add unchanged). The
// heavy loops (activations, softmax) keep prefetching there: without it,
// gelu 1M took 666-696 us against 542-628.
constexpr bool kPrefetchLightLoops = HWY_TARGET != HWY_AVX3_ZEN4;

// Prefetches (a hint: never faults) the line kPrefetchBytes past p, for
// reading or (kWrite = 1) writing; integer arithmetic, as the address may lie
// past the array.
template <int kWrite = 0, class T>
HWY_INLINE void PrefetchAhead(const T* p) {
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + kPrefetchBytes), kWrite);
}

// Requests each cache line of p[0, n) for writing (a hint: never faults).
template <class T>
HWY_INLINE void PrefetchLinesForWrite(T* p, size_t n) {
  for (size_t byte = 0; byte < n * sizeof(T); byte += 64) {
    __builtin_prefetch(reinterpret_cast<char*>(p) + byte, 1);
  }
}

// PrefetchAhead for each cache line of p[0, n) (n elements, p line-aligned
// or not: the lines kPrefetchBytes past p, p + 64 bytes, ...).
template <class T>
HWY_INLINE void PrefetchLinesAhead(const T* p, size_t n) {
  for (size_t byte = 0; byte < n * sizeof(T); byte += 64) {
    PrefetchAhead(reinterpret_cast<const char*>(p) + byte);
  }
}

// Calls body(d, i, io) for every vector of lane type C in [begin, n): io is
// FullVector{} for the full ones, then PartialVector{n - i} for the tail
// (convert-inl.h), so one body (loading and storing through io) serves both.
template <class C, class Body>
HWY_INLINE void ForEachVector(size_t begin, size_t n, const Body& body) {
  const hn::ScalableTag<C> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = begin;
  for (; i + lanes <= n; i += lanes) body(d, i, FullVector{});
  if (i < n) body(d, i, PartialVector{n - i});
}

template <class C, class Body>
HWY_INLINE void ForEachVector(size_t n, const Body& body) {
  ForEachVector<C>(0, n, body);
}

// Writes out[0, n) of storage type T vector by vector: value(d, i, io) is the
// compute vector of elements [i, i + Lanes(d)), its inputs read through io
// (as in ForEachVector's body). Where kNarrowsInPairs<T>, full vectors go two
// at a time, narrowed and stored together (StorePairAs).
template <class T, class Value>
HWY_INLINE void MapVectors(T* out, size_t n, const Value& value) {
  using C = ComputeType<T>;
  size_t begin = 0;
  if constexpr (kNarrowsInPairs<T>) {
    const hn::ScalableTag<C> d;
    const size_t lanes = hn::Lanes(d);
    for (; begin + 2 * lanes <= n; begin += 2 * lanes) {
      StorePairAs(value(d, begin, FullVector{}), value(d, begin + lanes, FullVector{}), d, out + begin);
    }
  }
  ForEachVector<C>(begin, n, [&](auto d, size_t i, auto io) HWY_ATTR {
    io.Store(value(d, i, io), d, out + i);
  });
}

// out[i] = op(d, x[i]) for i in [0, n). out may equal x; no other overlap.
// kPrefetch: request the lines kPrefetchBytes ahead.
template <bool kPrefetch = true, class T, class Op>
HWY_INLINE void MapUnary(const T* x, T* out, size_t n, const Op& op) {
  MapVectors(out, n, [&](auto d, size_t i, auto io) HWY_ATTR {
    if constexpr (kPrefetch) {
      PrefetchAhead(x + i);
      PrefetchAhead<1>(out + i);
    }
    return op(d, io.Load(d, x + i));
  });
}

// out[i] = op(d, x[i], y[i]) for i in [0, n). out may equal x or y.
template <bool kPrefetch = true, class T, class Op>
HWY_INLINE void MapBinary(const T* x, const T* y, T* out, size_t n, const Op& op) {
  MapVectors(out, n, [&](auto d, size_t i, auto io) HWY_ATTR {
    if constexpr (kPrefetch) {
      PrefetchAhead(x + i);
      PrefetchAhead(y + i);
      PrefetchAhead<1>(out + i);
    }
    return op(d, io.Load(d, x + i), io.Load(d, y + i));
  });
}

// Elements [begin, end) of out = op(x, y) where y repeats every `period`
// elements (the trailing-dims broadcast): one MapBinary per stretch of x that
// meets one contiguous stretch of y.
template <bool kPrefetch = true, class T, class Op>
HWY_INLINE void MapBinaryPeriodic(const T* x, const T* y, size_t period, T* out, size_t begin,
                                  size_t end, const Op& op) {
  size_t phase = begin % period;
  for (size_t i = begin; i < end; phase = 0) {
    const size_t len = HWY_MIN(period - phase, end - i);
    MapBinary<kPrefetch>(x + i, y + phase, out + i, len, op);
    i += len;
  }
}

// float64 -> float32 vector, round to nearest even, overflow to inf.
template <class DF, class V64>
HWY_INLINE hn::Vec<DF> F64ToF32(DF df, V64 v) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  // Highway's DemoteTo there (1.3.0 as 1.0.3) clamps everything beyond
  // +-FLT_MAX, inf included, to +-FLT_MAX; the C++ conversion is IEEE's.
  const hn::Rebind<double, DF> dd;
  HWY_ALIGN double wide[hn::MaxLanes(dd)];
  HWY_ALIGN float narrow[hn::MaxLanes(df)];
  hn::Store(v, dd, wide);
  for (size_t i = 0; i < hn::Lanes(df); ++i) narrow[i] = static_cast<float>(wide[i]);
  return hn::Load(df, narrow);
#else
  return hn::DemoteTo(df, v);  // cvtpd2ps and equivalents: IEEE
#endif
}

// A compute vector converted to compute type TFromD<DTo> (same lane count).
template <class DTo, class V>
HWY_INLINE hn::Vec<DTo> ConvertCompute(DTo d_to, V v) {
  using From = hn::TFromV<V>;
  using To = hn::TFromD<DTo>;
  if constexpr (hwy::IsSame<From, To>()) {
    return v;
  } else if constexpr (hwy::IsSame<To, double>()) {
    return hn::PromoteTo(d_to, v);  // exact
  } else {
    return F64ToF32(d_to, v);
  }
}

// out[i] = x[i] converted from storage type TIn to TOut: loaded exactly into
// TIn's compute type, converted between compute types (rounding only from
// double to float), stored with one rounding to TOut. float64 -> float16 /
// bfloat16 thus rounds twice, through float32, as torch does.
template <class TIn, class TOut>
HWY_INLINE void MapConvert(const TIn* x, TOut* out, size_t n) {
  using CIn = ComputeType<TIn>;
  using COut = ComputeType<TOut>;
  // Iterate with the wider compute type's lane count; the other is rebound.
  // (MapVectors: the output's, so that bfloat16 outputs go in pairs.)
  if constexpr (sizeof(CIn) <= sizeof(COut)) {
    MapVectors(out, n, [&](auto d_out, size_t i, auto io) HWY_ATTR {
      return ConvertCompute(d_out, io.Load(hn::Rebind<CIn, decltype(d_out)>(), x + i));
    });
  } else {
    ForEachVector<CIn>(n, [&](auto d_in, size_t i, auto io) HWY_ATTR {
      const hn::Rebind<COut, decltype(d_in)> d_out;
      io.Store(ConvertCompute(d_out, io.Load(d_in, x + i)), d_out, out + i);
    });
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_ELEMENTWISE_INL_H_
