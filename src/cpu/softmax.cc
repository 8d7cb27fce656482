// Highway kernels of softmax and log_softmax over contiguous rows, compiled
// once per SIMD target and dispatched at run time.
//
// Per row: each segment of kSoftmaxSegment elements gives (max, sum of
// exp(x - max)) from a max pass and an exp-sum pass over L1-resident data;
// segments combine left to right in double (softmax.h); a last pass writes
// exp(x - max) * (1 / sum) or (x - max) - log(sum). Many rows: rows are split
// among threads. Few long rows: segments, then elements, are split among
// threads; both ways compute the same partials in the same order.
#include <stddef.h>
#include <stdint.h>

#include <limits>
#include <vector>

#include "src/core/kernels.h"
#include "src/cpu/softmax.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/softmax.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "src/cpu/convert-inl.h"
#include "src/cpu/elementwise-inl.h"
#include "src/cpu/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The first pass over one segment x[0, n), n <= kSoftmaxSegment: its max,
// and whether it held NaN. The last partial vector is loaded padded with
// -inf (LoadNOrAs), which changes neither max nor sum.
template <class C>
struct SegmentMax {
  C max;
  bool nan;
};

template <class T, class C>
HWY_INLINE SegmentMax<C> SegmentMaxPass(const T* x, size_t n) {
  const hn::ScalableTag<C> d;
  const size_t lanes = hn::Lanes(d);
  const size_t full = n / lanes * lanes, rest = n - full;
  // Max is exact, so four accumulators change no result; they only break
  // the dependency chain. NaN lanes are tracked apart: Max's handling of NaN
  // differs between targets.
  auto max0 = hn::Set(d, -std::numeric_limits<C>::infinity()), max1 = max0, max2 = max0,
       max3 = max0;
  auto nan = hn::Zero(d);
  const auto visit_max = [&](hn::Vec<decltype(d)>& acc, hn::Vec<decltype(d)> v) HWY_ATTR {
    acc = hn::Max(acc, v);
    nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
  };
  size_t i = 0;
  for (; i + 4 * lanes <= full; i += 4 * lanes) {
    PrefetchAhead(x + i);  // the first pass over a segment reads memory
    visit_max(max0, LoadAs(d, x + i));
    visit_max(max1, LoadAs(d, x + i + lanes));
    PrefetchAhead(x + i + 2 * lanes);
    visit_max(max2, LoadAs(d, x + i + 2 * lanes));
    visit_max(max3, LoadAs(d, x + i + 3 * lanes));
  }
  for (; i < full; i += lanes) visit_max(max0, LoadAs(d, x + i));
  if (rest) {
    visit_max(max1, LoadNOrAs(hn::Set(d, -std::numeric_limits<C>::infinity()), d, x + full, rest));
  }
  const auto max = hn::MaxOfLanes(d, hn::Max(hn::Max(max0, max1), hn::Max(max2, max3)));
  return {hn::GetLane(max), !hn::AllFalse(d, hn::MaskFromVec(nan))};
}

// The same for bfloat16/float16, on the bits as int16 lanes: twice the
// lanes of float32 and no widening. The formats are sign-magnitude, so as
// int16 the non-negative values order as their floats and the negative ones
// in reverse: the max is the largest int16 if that is >= 0 (a non-negative
// value is present), else the smallest (all negative: the one nearest 0).
// NaN is a magnitude (bits & 0x7FFF) above infinity's. -inf padding changes
// neither extreme nor the magnitude test.
template <class T>
HWY_INLINE SegmentMax<float> HalfSegmentMaxPass(const T* x, size_t n) {
  const hn::ScalableTag<int16_t> d;
  const size_t lanes = hn::Lanes(d);
  const size_t full = n / lanes * lanes, rest = n - full;
  constexpr int16_t kInfBits = hwy::IsSame<T, hwy::bfloat16_t>() ? 0x7F80 : 0x7C00;
  const auto* bits = reinterpret_cast<const int16_t*>(x);
  const auto magnitude_mask = hn::Set(d, int16_t{0x7FFF});
  auto hi0 = hn::Set(d, std::numeric_limits<int16_t>::min()), hi1 = hi0;
  auto lo0 = hn::Set(d, std::numeric_limits<int16_t>::max()), lo1 = lo0;
  auto magnitude = hn::Zero(d);
  const auto visit = [&](hn::Vec<decltype(d)>& hi, hn::Vec<decltype(d)>& lo,
                         hn::Vec<decltype(d)> v) HWY_ATTR {
    hi = hn::Max(hi, v);
    lo = hn::Min(lo, v);
    magnitude = hn::Max(magnitude, hn::And(v, magnitude_mask));
  };
  size_t i = 0;
  for (; i + 2 * lanes <= full; i += 2 * lanes) {
    PrefetchLinesAhead(x + i, 2 * lanes);  // the first pass over a segment reads memory
    visit(hi0, lo0, hn::LoadU(d, bits + i));
    visit(hi1, lo1, hn::LoadU(d, bits + i + lanes));
  }
  for (; i < full; i += lanes) visit(hi0, lo0, hn::LoadU(d, bits + i));
  if (rest) {
    const auto minus_inf = hn::Set(d, static_cast<int16_t>(kInfBits | 0x8000));
    visit(hi1, lo1, hn::LoadNOr(minus_inf, d, bits + full, rest));
  }
  const int16_t hi = hn::GetLane(hn::MaxOfLanes(d, hn::Max(hi0, hi1)));
  const int16_t lo = hn::GetLane(hn::MinOfLanes(d, hn::Min(lo0, lo1)));
  const int16_t max_bits = hi >= 0 ? hi : lo;
  const bool nan = hn::GetLane(hn::MaxOfLanes(d, magnitude)) > kInfBits;
  const hn::CappedTag<float, 1> d1;
  const hn::Rebind<uint16_t, decltype(d1)> d1u16;
  const auto max = HalfBitsToCompute<T>(d1, hn::Set(d1u16, static_cast<uint16_t>(max_bits)));
  return {hn::GetLane(max), nan};
}

// e^t, t = x - max <= 0, of a softmax row: to the float32 bound of the
// docs for float32/float64 rows; cheaper for 16-bit rows, whose results are
// rounded to 8 or 11 bits (math-inl.h). Every pass of a row uses the same.
template <class T, class D>
HWY_INLINE hn::Vec<D> SoftmaxExp(D d, hn::Vec<D> t) {
  if constexpr (sizeof(T) == 2) {
    return ExpNonPositiveFor16Bit(d, t);
  } else {
    return Exponential(d, t);
  }
}

// The second pass: the partial of x[0, n) given its max m. When `exps` is
// not null, exp(x - max) is also stored there (n elements): for a row of one
// segment, the write pass then only scales. kCountOnes (log_softmax): keep
// the entries equal to the max apart, in `ones`; softmax, whose scale is
// 1 / (ones + rest) alone, sums every exp into `rest` (exp(0) = 1 exactly).
template <bool kCountOnes, class T, class C>
HWY_INLINE SoftmaxPartial SegmentExpSumPass(const T* x, size_t n, const SegmentMax<C>& m, C* exps,
                                            T* out) {
  static_assert(hwy::IsSame<C, ComputeType<T>>(), "exps are in the compute type");
  const hn::ScalableTag<C> d;
  const size_t lanes = hn::Lanes(d);
  const size_t full = n / lanes * lanes, rest = n - full;
  const auto max = hn::Set(d, m.max);
  // exp(x - max) <= 1. Both exps give 0 for -inf (and NaN on x86), so -inf
  // entries, and lanes when the max is -inf or +inf, add nothing; such rows
  // and NaN are settled by FinishRow. For log_softmax, entries equal to the
  // max are counted in `ones`, the others summed in `rest` (softmax.h says
  // why). Summed in blocks of kSumBlock vectors, each over four
  // accumulators: no chain of dependent adds is longer than 16 + n /
  // (kSumBlock * lanes), which keeps narrow targets as accurate as wide ones
  // (and lets four Exp chains overlap).
  constexpr size_t kSumBlock = 64;
  struct Sums {
    size_t ones;
    hn::Vec<decltype(d)> rest;
  };
  const auto zero = hn::Zero(d);
  // Inlined by force: GCC called log_softmax's (the larger body) once a
  // vector (float32, 1 thread: 13-20 % of the call at 16384x4096 and
  // 1024x1024). Not in sanitizer builds, whose compile time it doubled.
  const auto add = [&](Sums& acc, hn::Vec<decltype(d)> v, C* exps_at, auto io)
                       HWY_ATTR HETKERN_INLINE_UNLESS_SANITIZED {
    const auto shifted = hn::Sub(v, max);
    const auto e = SoftmaxExp<T>(d, shifted);
    if (exps_at != nullptr) {
      // float32/float64 exps go to out, not yet in cache; 16-bit rows' to
      // a buffer that is.
      if constexpr (sizeof(T) != 2) PrefetchAhead<1>(exps_at);
      io.Store(e, d, exps_at);
    }
    if constexpr (kCountOnes) {
      const auto is_max = hn::Eq(shifted, zero);
      // Counted in a scalar (a popcount of the mask): no vector blend and
      // no horizontal sum a row. 4096 x 64 float32, 1 thread: 171 -> 163 us.
      acc.ones += hn::CountTrue(d, is_max);
      acc.rest = hn::Add(acc.rest, hn::IfThenZeroElse(is_max, e));
    } else {
      acc.rest = hn::Add(acc.rest, e);
    }
  };
  const auto exps_at = [&](size_t j) { return exps != nullptr ? exps + j : nullptr; };
  const auto fold = [&](Sums& into, const Sums& from) HWY_ATTR {
    into.ones += from.ones;
    into.rest = hn::Add(into.rest, from.rest);
  };
  Sums sum{0, zero};
  size_t i = 0;
  while (i + 4 * lanes <= full) {
    const size_t block_end = HWY_MIN(full - full % (4 * lanes), i + kSumBlock * lanes);
    Sums sum0{0, zero}, sum1 = sum0, sum2 = sum0, sum3 = sum0;
    for (; i < block_end; i += 4 * lanes) {
      // This pass reads x from L1, but keeps memory busy meanwhile: rows of
      // one segment lie end to end, so this requests the next rows' lines.
      PrefetchLinesAhead(x + i, 4 * lanes);
      if (out != nullptr) PrefetchLinesForWrite(out + i, 4 * lanes);
      add(sum0, LoadAs(d, x + i), exps_at(i), FullVector{});
      add(sum1, LoadAs(d, x + i + lanes), exps_at(i + lanes), FullVector{});
      add(sum2, LoadAs(d, x + i + 2 * lanes), exps_at(i + 2 * lanes), FullVector{});
      add(sum3, LoadAs(d, x + i + 3 * lanes), exps_at(i + 3 * lanes), FullVector{});
    }
    fold(sum0, sum1);
    fold(sum2, sum3);
    fold(sum0, sum2);
    fold(sum, sum0);
  }
  for (; i < full; i += lanes) add(sum, LoadAs(d, x + i), exps_at(i), FullVector{});
  if (rest) {
    const auto tail = LoadNOrAs(hn::Set(d, -std::numeric_limits<C>::infinity()), d, x + full, rest);
    add(sum, tail, exps_at(full), PartialVector{rest});
  }
  SoftmaxPartial p;
  p.max = static_cast<double>(m.max);
  p.ones = static_cast<double>(sum.ones);
  p.rest = static_cast<double>(hn::GetLane(hn::SumOfLanes(d, sum.rest)));
  p.nan = m.nan;
  return p;
}

// The max pass of the storage type: on the bits for 16-bit types.
template <class T, class C>
HWY_INLINE SegmentMax<C> SegmentMaxOf(const T* x, size_t n) {
  if constexpr (sizeof(T) == 2) {
    return HalfSegmentMaxPass(x, n);
  } else {
    return SegmentMaxPass<T, C>(x, n);
  }
}

// SegmentExpSumPass for log_softmax (`log`) or softmax. `out` (or null):
// where the segment's results go next, whose lines the pass requests for
// writing while it computes exps (log_softmax's write pass only subtracts:
// left to it, every line of out was a wait on memory).
template <class T, class C>
HWY_INLINE SoftmaxPartial SegmentExpSum(const T* x, size_t n, const SegmentMax<C>& m, C* exps,
                                        bool log, T* out = nullptr) {
  return log ? SegmentExpSumPass<true, T, C>(x, n, m, exps, out)
             : SegmentExpSumPass<false, T, C>(x, n, m, exps, out);
}

// Partial of one segment x[0, n), n <= kSoftmaxSegment: a max pass, then a
// pass summing exp(x - max), both over full vectors; exps as above.
template <class T, class C>
HWY_INLINE SoftmaxPartial SegmentPartial(const T* x, size_t n, C* exps, bool log,
                                         T* out = nullptr) {
  return SegmentExpSum<T, C>(x, n, SegmentMaxOf<T, C>(x, n), exps, log, out);
}

// Partial of a whole row: its segments folded left to right.
// A row of one segment prefetches out for the write pass (its lines stay in
// cache until then; a longer row's first segment would not keep them).
template <class T>
HWY_INLINE SoftmaxPartial RowPartial(const T* HWY_RESTRICT x, T* out, size_t cols, bool log) {
  using C = ComputeType<T>;
  SoftmaxPartial p = SegmentPartial<T, C>(x, HWY_MIN(kSoftmaxSegment, cols), nullptr, log,
                                          cols <= kSoftmaxSegment ? out : nullptr);
  for (size_t begin = kSoftmaxSegment; begin < cols; begin += kSoftmaxSegment) {
    p = Combine(p, SegmentPartial<T, C>(x + begin, HWY_MIN(kSoftmaxSegment, cols - begin), nullptr, log));
  }
  return p;
}

template <class T, class C>
struct SoftmaxOp {
  C max, inv_sum;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> v) const {
    return hn::Mul(SoftmaxExp<T>(d, hn::Sub(v, hn::Set(d, max))), hn::Set(d, inv_sum));
  }
};

template <class C>
struct LogSoftmaxOp {
  C max, log_sum;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> v) const {
    return hn::Sub(hn::Sub(v, hn::Set(d, max)), hn::Set(d, log_sum));
  }
};

// out[0, n) = exps[0, n) * factor in the storage type: the same values as
// SoftmaxOp gives when exps holds exp(x - max). exps may alias out.
template <class T, class C>
HWY_INLINE void ScaleExps(const C* exps, T* out, size_t n, C factor) {
  // MapVectors narrows bfloat16 results in pairs where it can; a pair's
  // both exps are loaded before its store, so aliasing stays safe.
  MapVectors(out, n, [&](auto d, size_t i, auto io) HWY_ATTR {
    PrefetchAhead<1>(out + i);  // out is not in cache yet (exps are)
    return hn::Mul(io.Load(d, exps + i), hn::Set(d, factor));
  });
}

// out[0, n) from x[0, n), part of one row with the given scale.
template <class T>
HWY_INLINE void WriteRun(const T* x, T* out, size_t n, const SoftmaxRowScale& s, bool log) {
  using C = ComputeType<T>;
  if (log) {
    MapUnary(x, out, n, LogSoftmaxOp<C>{static_cast<C>(s.max), static_cast<C>(s.log_sum)});
  } else {
    MapUnary(x, out, n, SoftmaxOp<T, C>{static_cast<C>(s.max), static_cast<C>(s.inv_sum)});
  }
}

// kGroup rows of one segment each (cols <= kSoftmaxSegment), pass by pass:
// both passes of every row, then every row's scale, then the writes. Each
// row's arithmetic is that of a row alone; interleaving only lets the
// out-of-order core overlap the rows' dependency chains (horizontal max and
// sums, exp, the scalar scale), which dominate short rows. Row g's exps go
// to exps + g * exps_stride (compute type); exps is null for log_softmax,
// whose write pass computes from x.
template <size_t kGroup, class T, class C>
HWY_INLINE void OneSegmentRows(const T* x, T* out, size_t cols, size_t x_stride, size_t out_stride,
                               C* exps, size_t exps_stride, bool log) {
  SegmentMax<C> m[kGroup];
  for (size_t g = 0; g < kGroup; ++g) m[g] = SegmentMaxOf<T, C>(x + g * x_stride, cols);
  SoftmaxPartial p[kGroup];
  for (size_t g = 0; g < kGroup; ++g) {
    C* exps_g = exps != nullptr ? exps + g * exps_stride : nullptr;
    p[g] = SegmentExpSum<T, C>(x + g * x_stride, cols, m[g], exps_g, log);
  }
  SoftmaxRowScale s[kGroup];
  for (size_t g = 0; g < kGroup; ++g) s[g] = FinishRow(p[g], log);
  for (size_t g = 0; g < kGroup; ++g) {
    if (exps != nullptr) {
      ScaleExps(exps + g * exps_stride, out + g * out_stride, cols,
                static_cast<C>(SegmentFactor(p[g].max, s[g])));
    } else {
      WriteRun(x + g * x_stride, out + g * out_stride, cols, s[g], log);
    }
  }
}

// Rows of storage type T up to kSoftmaxGroupedCols<T> long go
// kSoftmaxRowGroup at a time through OneSegmentRows. Measured
// (docs/performance.md, "Short softmax rows"): 16-bit rows of 64-256 gain
// 1.1-1.4x; float32 rows of 32-64 gain 1.1-1.4x (float64 1.0-1.3x) but
// lose at 256-1024 (four rows of x and exps crowd L1), mixed at 128.
// log_softmax keeps no exps, so its groups go further: float32 rows of 128
// 1.4x, 256-512 level, 1024 0.88x; 16-bit rows of 512-1024 1.1-1.2x (2
// threads, AVX3_SPR).
constexpr size_t kSoftmaxRowGroup = 4;
// log_softmax rows of up to 64 go 8 at a time: each row's scale is a chain
// (sums, log1p) longer than its few vectors of exps, and 8 overlap better.
// AVX3_ZEN4, 1 thread, 4096 x 64 (us): float32 163 -> 152 (torch 157-159),
// 16-bit 167-170 -> 160-162; float64 level, so it keeps groups of 4 (one
// instantiation less a target: sanitizer builds compile this file longest);
// 16 rows a group as 8.
constexpr size_t kLogSoftmaxShortRowGroup = 8;
constexpr size_t kLogSoftmaxShortCols = 64;
template <class T>
constexpr size_t kSoftmaxGroupedCols = sizeof(T) == 2 ? 256 : 64;
template <class T>
constexpr size_t kLogSoftmaxGroupedCols = sizeof(T) == 2 ? 1024 : sizeof(T) == 4 ? 512 : 64;

// Whole rows, one after another. Where exps are kept (in out, or for a
// 16-bit row in a float32 buffer) each is computed once: exp(x - segment
// max), rescaled by SegmentFactor when writing; for a one-segment row that
// equals the recomputed exp(x - max) * (1 / sum) bit for bit.
// Rows are x_stride (out_stride) elements apart.
void SoftmaxRowsKernel(DType dtype, const void* x, void* out, size_t rows, size_t cols,
                       size_t x_stride, size_t out_stride, bool log) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    constexpr bool kSameType = hwy::IsSame<T, C>();
    const auto* xs = static_cast<const T*>(x);
    auto* outs = static_cast<T*>(out);
    HWY_ALIGN C buffer[kSameType ? 1 : kSoftmaxSegment];  // exps of 16-bit one-segment rows
    std::vector<C> row_buffer;                             // 16-bit rows of several segments
    // Where row r's exps go (out == x is fine: each segment of x is read
    // before it is written), or null where the write pass computes them
    // again (log_softmax, and rows too long to keep them). In a group of
    // one-segment 16-bit rows, row r + g's exps follow at g * cols.
    const auto exps_of = [&](size_t r) -> C* {
      if constexpr (kSameType) {
        return SoftmaxCachesExpsInOut(true, log, cols) ? outs + r * out_stride : nullptr;
      } else {
        if (log) return nullptr;
        if (cols <= kSoftmaxSegment) return buffer;
        if (cols > kSoftmaxMaxBufferedSegments * kSoftmaxSegment) return nullptr;
        row_buffer.resize(cols);
        return row_buffer.data();
      }
    };
    const size_t group_exps_stride = kSameType ? out_stride : cols;
    size_t r = 0;
    // Short rows in groups; the rows left over take the loop below.
    const size_t grouped_cols = log ? kLogSoftmaxGroupedCols<T> : kSoftmaxGroupedCols<T>;
    if constexpr (!hwy::IsSame<T, double>()) {  // float64 gains nothing from groups of 8
      for (; log && cols <= kLogSoftmaxShortCols && r + kLogSoftmaxShortRowGroup <= rows;
           r += kLogSoftmaxShortRowGroup) {  // exps_of(r) is null for log_softmax
        OneSegmentRows<kLogSoftmaxShortRowGroup>(xs + r * x_stride, outs + r * out_stride, cols,
                                                 x_stride, out_stride, exps_of(r), 0, log);
      }
    }
    for (; cols <= grouped_cols && r + kSoftmaxRowGroup <= rows; r += kSoftmaxRowGroup) {
      OneSegmentRows<kSoftmaxRowGroup>(xs + r * x_stride, outs + r * out_stride, cols, x_stride,
                                       out_stride, exps_of(r), group_exps_stride, log);
    }
    double segment_max[kSameType ? kSoftmaxMaxCachedSegments : kSoftmaxMaxBufferedSegments];
    for (; r < rows; ++r) {
      const T* xr = xs + r * x_stride;
      T* outr = outs + r * out_stride;
      C* exps = exps_of(r);
      if (exps == nullptr) {
        WriteRun(xr, outr, cols, FinishRow(RowPartial(xr, outr, cols, log), log), log);
        continue;
      }
      SoftmaxPartial p;
      for (size_t begin = 0, j = 0; begin < cols; begin += kSoftmaxSegment, ++j) {
        const SoftmaxPartial pj =
            SegmentPartial<T, C>(xr + begin, HWY_MIN(kSoftmaxSegment, cols - begin), exps + begin, log);
        segment_max[j] = pj.max;
        p = j == 0 ? pj : Combine(p, pj);
      }
      const SoftmaxRowScale s = FinishRow(p, log);
      for (size_t begin = 0, j = 0; begin < cols; begin += kSoftmaxSegment, ++j) {
        ScaleExps(exps + begin, outr + begin, HWY_MIN(kSoftmaxSegment, cols - begin),
                  static_cast<C>(SegmentFactor(segment_max[j], s)));
      }
    }
  });
}

// The partial of x[0, n) (for log_softmax when `log`); exp(x - its max)
// stored to `exps` (of x's type, float32/float64 only) unless null.
void SoftmaxSegmentKernel(DType dtype, const void* x, size_t n, void* exps, bool log,
                          SoftmaxPartial* partial) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    C* exps_c = nullptr;
    if constexpr (hwy::IsSame<T, C>()) exps_c = static_cast<C*>(exps);
    *partial = SegmentPartial<T, C>(static_cast<const T*>(x), n, exps_c, log);
  });
}

// out[0, n) of one row: from x with the row's scale, or, when `factor` is
// not null, out *= *factor (out holding exps, float32/float64 only).
void SoftmaxWriteKernel(DType dtype, const void* x, void* out, size_t n,
                        const SoftmaxRowScale* scale, const double* factor, bool log) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    if constexpr (hwy::IsSame<T, C>()) {
      if (factor != nullptr) {
        ScaleExps(static_cast<C*>(out), static_cast<T*>(out), n, static_cast<C>(*factor));
        return;
      }
    }
    WriteRun(static_cast<const T*>(x), static_cast<T*>(out), n, *scale, log);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "src/cpu/parallel.h"

namespace hetkern {
namespace cpu {

// Below this many elements per thread, waking threads costs more than it
// saves (each element costs an exp, so this is lower than elementwise's).
constexpr int64_t kSoftmaxMinChunk = 1 << 14;

HWY_EXPORT(SoftmaxRowsKernel);
HWY_EXPORT(SoftmaxSegmentKernel);
HWY_EXPORT(SoftmaxWriteKernel);

namespace {

// Fewer rows than threads, each long: the rows' segments are reduced in
// parallel, folded per row in segment order (as RowPartial does), and the
// write pass is split by elements; the same arithmetic as the row path.
void SoftmaxSplitRows(const SoftmaxArgs& a) {
  const size_t elem = DTypeSizeOf(a.dtype);
  const auto* x = static_cast<const char*>(a.x);
  auto* out = static_cast<char*>(a.out);
  const bool same_type = a.dtype == DType::kFloat32 || a.dtype == DType::kFloat64;
  const bool cache = SoftmaxCachesExpsInOut(same_type, a.log, static_cast<size_t>(a.cols));
  const int64_t segment = static_cast<int64_t>(kSoftmaxSegment);
  const int64_t segments_per_row = (a.cols + segment - 1) / segment;
  // 16-bit rows that the row path buffers are written as it writes them,
  // exp(x - segment max) * segment factor, recomputing the exp.
  const bool buffered = !same_type && !a.log && segments_per_row <= int64_t{kSoftmaxMaxBufferedSegments};
  std::vector<SoftmaxPartial> partials(a.rows * segments_per_row);
  std::vector<double> factors(cache || buffered ? partials.size() : 0);
  std::vector<SoftmaxRowScale> scales(a.rows);
  ParallelFor(a.rows * segments_per_row, kSoftmaxMinChunk / segment, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = i / segments_per_row, col = (i % segments_per_row) * segment;
      const int64_t n = std::min<int64_t>(segment, a.cols - col);
      HWY_DYNAMIC_DISPATCH(SoftmaxSegmentKernel)(
          a.dtype, x + (row * a.x_stride + col) * elem, static_cast<size_t>(n),
          cache ? out + (row * a.out_stride + col) * elem : nullptr, a.log, &partials[i]);
    }
  });
  for (int64_t row = 0; row < a.rows; ++row) {
    const SoftmaxPartial* row_partials = &partials[row * segments_per_row];
    SoftmaxPartial p = row_partials[0];
    for (int64_t s = 1; s < segments_per_row; ++s) p = Combine(p, row_partials[s]);
    scales[row] = FinishRow(p, a.log);
    for (int64_t s = 0; (cache || buffered) && s < segments_per_row; ++s) {
      factors[row * segments_per_row + s] = SegmentFactor(row_partials[s].max, scales[row]);
    }
  }
  // Pieces end at segment boundaries, so each has one factor. `begin` and
  // `end` count elements of the rows laid end to end.
  ParallelFor(a.rows * a.cols, kSoftmaxMinChunk, 64, [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t row = begin / a.cols, col = begin % a.cols;
      const int64_t stop = std::min(end, row * a.cols + std::min(a.cols, (col / segment + 1) * segment));
      const int64_t i = row * segments_per_row + col / segment;
      const SoftmaxRowScale segment_scale{partials[i].max, factors.empty() ? 0.0 : factors[i], 0.0};
      HWY_DYNAMIC_DISPATCH(SoftmaxWriteKernel)(
          a.dtype, x + (row * a.x_stride + col) * elem, out + (row * a.out_stride + col) * elem,
          static_cast<size_t>(stop - begin), buffered ? &segment_scale : &scales[row],
          cache ? &factors[i] : nullptr, a.log);
      begin = stop;
    }
  });
}

}  // namespace

void Softmax(const SoftmaxArgs& a) {
  const int64_t threads = NumThreads();
  if (threads > 1 && a.rows < threads && a.rows * a.cols >= 2 * kSoftmaxMinChunk) {
    SoftmaxSplitRows(a);
    return;
  }
  const size_t elem = DTypeSizeOf(a.dtype);
  const int64_t min_rows = std::max<int64_t>(1, kSoftmaxMinChunk / a.cols);
  ParallelFor(a.rows, min_rows, 1, [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(SoftmaxRowsKernel)(
        a.dtype, static_cast<const char*>(a.x) + begin * a.x_stride * elem,
        static_cast<char*>(a.out) + begin * a.out_stride * elem, static_cast<size_t>(end - begin),
        static_cast<size_t>(a.cols), static_cast<size_t>(a.x_stride),
        static_cast<size_t>(a.out_stride), a.log);
  });
}

}  // namespace cpu
}  // namespace hetkern
#endif  // HWY_ONCE
