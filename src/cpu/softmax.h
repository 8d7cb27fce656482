// Row statistics of softmax shared by every Highway target and by the
// threading code: plain scalar double arithmetic, so partial results combine
// the same way whichever thread or target produced them.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace hetkern {
namespace cpu {

// Always inlined, also into SIMD-target code: an out-of-line call from AVX
// code into these baseline (SSE) functions costs an AVX-SSE transition stall
// per row, microseconds on some CPUs. Inlining changes no result: IEEE double
// arithmetic with no contraction (-ffp-contract=off) and libm's exp/log.
#define HETKERN_SOFTMAX_INLINE inline __attribute__((always_inline))

// Forced inlining of the kernels' large per-vector bodies, dropped where
// AddressSanitizer instruments the build (tools/sanitize-cpu): there it only
// lengthens GCC's compile, and changes no result.
#if defined(__SANITIZE_ADDRESS__)
#define HETKERN_INLINE_UNLESS_SANITIZED
#else
#define HETKERN_INLINE_UNLESS_SANITIZED __attribute__((always_inline))
#endif

// Rows are reduced in fixed segments of this many elements (fits L1 in
// float64): max and exp-sum of one segment come from two passes over cached
// data, and segments are combined left to right. The summation order thus
// depends only on the row length, never on the thread count.
constexpr size_t kSoftmaxSegment = 4096;

// softmax of float32/float64 rows of up to this many segments computes each
// exp once: exp(x - segment max) goes to out, which the write pass rescales
// by SegmentFactor. Longer rows compute exp(x - row max) again when writing.
constexpr size_t kSoftmaxMaxCachedSegments = 256;

// 16-bit softmax rows of up to this many segments keep their float32 exps
// in a buffer instead (out cannot hold them): 256 KiB, an L2's worth, so the
// write pass reads them from cache; vocabulary-wide rows (32000) fit.
constexpr size_t kSoftmaxMaxBufferedSegments = 16;

inline bool SoftmaxCachesExpsInOut(bool out_is_compute_type, bool log, size_t cols) {
  return out_is_compute_type && !log && cols <= kSoftmaxMaxCachedSegments * kSoftmaxSegment;
}

// max and sum(exp(x - max)) of a run of elements; `nan` when one was NaN.
// The sum is kept as ones + rest: `ones` counts the entries equal to the
// max (each exp(0) = 1 exactly), `rest` sums the others (each < 1). When the
// max dominates, sum = 1 + tiny: a rounded sum would lose the tiny part,
// which is all there is of log(sum) = log1p((ones - 1) + rest), i.e. of
// log_softmax at the max entry (2 bfloat16 ulps lost on [-0.68, -0.12, 12.5]).
struct SoftmaxPartial {
  double max = -std::numeric_limits<double>::infinity();
  double ones = 0.0;
  double rest = 0.0;
  bool nan = false;
};

// exp(from - to) for from <= to, exactly 1 when equal (also for two -inf or
// two +inf, where the difference would be NaN).
HETKERN_SOFTMAX_INLINE double SoftmaxRescale(double from, double to) {
  return from == to ? 1.0 : std::exp(from - to);
}

// Partials of consecutive runs, folded left to right: fold = first, then
// fold = Combine(fold, next) for each following one. A partial whose max is
// below the combined one turns wholly into rest.
HETKERN_SOFTMAX_INLINE SoftmaxPartial Combine(const SoftmaxPartial& a, const SoftmaxPartial& b) {
  SoftmaxPartial r;
  r.max = std::max(a.max, b.max);
  for (const SoftmaxPartial* p : {&a, &b}) {
    if (p->max == r.max) {
      r.ones += p->ones;
      r.rest += p->rest;
    } else {
      r.rest += (p->ones + p->rest) * SoftmaxRescale(p->max, r.max);
    }
  }
  r.nan = a.nan || b.nan;
  return r;
}

// What the write pass needs of a row: y = exp(x - max) * inv_sum, or
// y = (x - max) - log_sum.
struct SoftmaxRowScale {
  double max;
  double inv_sum;
  double log_sum;
};

// A row holding NaN or +inf, or only -inf, is NaN throughout (as in torch,
// where max - max or exp(NaN) poisons the sum): all terms NaN do that.
// Otherwise the max element contributes exp(0) = 1, so ones + rest >= 1
// (softmax partials keep every term in rest: ones = 0).
HETKERN_SOFTMAX_INLINE SoftmaxRowScale FinishRow(const SoftmaxPartial& p, bool log) {
  if (p.nan || !std::isfinite(p.max)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan};
  }
  return {p.max, 1.0 / (p.ones + p.rest), log ? std::log1p((p.ones - 1.0) + p.rest) : 0.0};
}

// The factor turning exp(x - segment_max) into softmax(x) for a row.
HETKERN_SOFTMAX_INLINE double SegmentFactor(double segment_max, const SoftmaxRowScale& s) {
  return SoftmaxRescale(segment_max, s.max) * s.inv_sum;
}

}  // namespace cpu
}  // namespace hetkern
