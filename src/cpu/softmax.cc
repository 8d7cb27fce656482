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

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class Fn>
HWY_INLINE void VisitCpuType(DType dtype, Fn&& fn) {
  VisitDType<float, double, hwy::float16_t, hwy::bfloat16_t>(dtype, fn);
}

// Partial of x[0, n), n a multiple of Lanes(d): lane-wise max, then the sum
// of exp(x - max) per lane, then the lanes' sum. Called with full vectors and
// with a 1-lane tag for the tail.
template <class D, class T>
HWY_INLINE SoftmaxPartial RunPartial(D d, const T* HWY_RESTRICT x, size_t n) {
  const size_t lanes = hn::Lanes(d);
  SoftmaxPartial p;
  if (n == 0) return p;
  using C = hn::TFromD<D>;
  // Max is exact, so four independent accumulators change no result; they
  // only break the dependency chain.
  auto max0 = hn::Set(d, static_cast<C>(-HUGE_VAL)), max1 = max0, max2 = max0, max3 = max0;
  auto nan = hn::Zero(d);  // NaN lanes seen; Max's NaN handling is target-specific
  size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const auto v0 = LoadAs(d, x + i), v1 = LoadAs(d, x + i + lanes);
    const auto v2 = LoadAs(d, x + i + 2 * lanes), v3 = LoadAs(d, x + i + 3 * lanes);
    max0 = hn::Max(max0, v0);
    max1 = hn::Max(max1, v1);
    max2 = hn::Max(max2, v2);
    max3 = hn::Max(max3, v3);
    const auto any_nan = hn::Or(hn::Or(hn::VecFromMask(d, hn::IsNaN(v0)), hn::VecFromMask(d, hn::IsNaN(v1))),
                                hn::Or(hn::VecFromMask(d, hn::IsNaN(v2)), hn::VecFromMask(d, hn::IsNaN(v3))));
    nan = hn::Or(nan, any_nan);
  }
  for (; i < n; i += lanes) {
    const auto v = LoadAs(d, x + i);
    max0 = hn::Max(max0, v);
    nan = hn::Or(nan, hn::VecFromMask(d, hn::IsNaN(v)));
  }
  const auto max = hn::MaxOfLanes(d, hn::Max(hn::Max(max0, max1), hn::Max(max2, max3)));
  // exp(x - max) <= 1. Highway's Exp gives 0 for -inf and for NaN, so -inf
  // entries, and lanes when the max is -inf or +inf, add nothing; such rows
  // and NaN are settled by FinishRow.
  // Summed in blocks of kSumBlock vectors, each over four accumulators: no
  // chain of dependent adds is longer than 16 + n / (kSumBlock * lanes), which
  // keeps the error of narrow targets close to that of wide ones (and the
  // four independent Exp chains overlap).
  constexpr size_t kSumBlock = 64;
  const auto exp_at = [&](size_t j) HWY_ATTR { return hn::Exp(d, hn::Sub(LoadAs(d, x + j), max)); };
  auto sum = hn::Zero(d);
  i = 0;
  while (i + 4 * lanes <= n) {
    const size_t block_end = HWY_MIN(n - n % (4 * lanes), i + kSumBlock * lanes);
    auto sum0 = hn::Zero(d), sum1 = sum0, sum2 = sum0, sum3 = sum0;
    for (; i < block_end; i += 4 * lanes) {
      sum0 = hn::Add(sum0, exp_at(i));
      sum1 = hn::Add(sum1, exp_at(i + lanes));
      sum2 = hn::Add(sum2, exp_at(i + 2 * lanes));
      sum3 = hn::Add(sum3, exp_at(i + 3 * lanes));
    }
    sum = hn::Add(sum, hn::Add(hn::Add(sum0, sum1), hn::Add(sum2, sum3)));
  }
  for (; i < n; i += lanes) sum = hn::Add(sum, exp_at(i));
  p.max = static_cast<double>(hn::GetLane(max));
  p.sum = static_cast<double>(hn::GetLane(hn::SumOfLanes(d, sum)));
  p.nan = !hn::AllFalse(d, hn::MaskFromVec(nan));
  return p;
}

// Partial of one segment x[0, n), n <= kSoftmaxSegment.
template <class T>
HWY_INLINE SoftmaxPartial SegmentPartial(const T* HWY_RESTRICT x, size_t n) {
  using C = ComputeType<T>;
  const hn::ScalableTag<C> d;
  const size_t full = n / hn::Lanes(d) * hn::Lanes(d);
  return Combine(RunPartial(d, x, full), RunPartial(hn::CappedTag<C, 1>(), x + full, n - full));
}

// Partial of a whole row: its segments combined left to right.
template <class T>
HWY_INLINE SoftmaxPartial RowPartial(const T* HWY_RESTRICT x, size_t cols) {
  SoftmaxPartial p;
  for (size_t begin = 0; begin < cols; begin += kSoftmaxSegment) {
    p = Combine(p, SegmentPartial(x + begin, HWY_MIN(kSoftmaxSegment, cols - begin)));
  }
  return p;
}

template <class C>
struct SoftmaxOp {
  C max, inv_sum;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> v) const {
    return hn::Mul(hn::Exp(d, hn::Sub(v, hn::Set(d, max))), hn::Set(d, inv_sum));
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

// out[0, n) from x[0, n), all of one row with the given scale.
template <class T>
HWY_INLINE void WriteRun(const T* x, T* out, size_t n, const SoftmaxRowScale& s, bool log) {
  using C = ComputeType<T>;
  if (log) {
    MapUnary(x, out, n, LogSoftmaxOp<C>{static_cast<C>(s.max), static_cast<C>(s.log_sum)});
  } else {
    MapUnary(x, out, n, SoftmaxOp<C>{static_cast<C>(s.max), static_cast<C>(s.inv_sum)});
  }
}

// Whole rows, one after another.
void SoftmaxRowsKernel(DType dtype, const void* x, void* out, size_t rows, size_t cols, bool log) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    for (size_t r = 0; r < rows; ++r) {
      const T* xr = static_cast<const T*>(x) + r * cols;
      WriteRun(xr, static_cast<T*>(out) + r * cols, cols, FinishRow(RowPartial(xr, cols)), log);
    }
  });
}

void SoftmaxSegmentKernel(DType dtype, const void* x, size_t n, SoftmaxPartial* partial) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    *partial = SegmentPartial(static_cast<const T*>(x), n);
  });
}

void SoftmaxWriteKernel(DType dtype, const void* x, void* out, size_t n,
                        const SoftmaxRowScale* scale, bool log) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
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
// parallel, combined per row in segment order (as RowPartial does), and the
// write pass is split by elements.
void SoftmaxSplitRows(const SoftmaxArgs& a) {
  const size_t elem = DTypeSizeOf(a.dtype);
  const auto* x = static_cast<const char*>(a.x);
  auto* out = static_cast<char*>(a.out);
  const int64_t segments_per_row =
      (a.cols + static_cast<int64_t>(kSoftmaxSegment) - 1) / static_cast<int64_t>(kSoftmaxSegment);
  std::vector<SoftmaxPartial> partials(a.rows * segments_per_row);
  std::vector<SoftmaxRowScale> scales(a.rows);
  const int64_t min_segments = kSoftmaxMinChunk / static_cast<int64_t>(kSoftmaxSegment);
  ParallelFor(a.rows * segments_per_row, min_segments, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = i / segments_per_row;
      const int64_t col = (i % segments_per_row) * static_cast<int64_t>(kSoftmaxSegment);
      const int64_t n = std::min<int64_t>(kSoftmaxSegment, a.cols - col);
      HWY_DYNAMIC_DISPATCH(SoftmaxSegmentKernel)(a.dtype, x + (row * a.cols + col) * elem,
                                                 static_cast<size_t>(n), &partials[i]);
    }
  });
  for (int64_t row = 0; row < a.rows; ++row) {
    SoftmaxPartial p;
    for (int64_t s = 0; s < segments_per_row; ++s) p = Combine(p, partials[row * segments_per_row + s]);
    scales[row] = FinishRow(p);
  }
  ParallelFor(a.rows * a.cols, kSoftmaxMinChunk, 64, [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t row = begin / a.cols;
      const int64_t stop = std::min(end, (row + 1) * a.cols);
      HWY_DYNAMIC_DISPATCH(SoftmaxWriteKernel)(a.dtype, x + begin * elem, out + begin * elem,
                                               static_cast<size_t>(stop - begin), &scales[row], a.log);
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
        a.dtype, static_cast<const char*>(a.x) + begin * a.cols * elem,
        static_cast<char*>(a.out) + begin * a.cols * elem, static_cast<size_t>(end - begin),
        static_cast<size_t>(a.cols), a.log);
  });
}

}  // namespace cpu
}  // namespace hetkern
#endif  // HWY_ONCE
