// Row statistics of softmax shared by every Highway target and by the
// threading code: plain scalar double arithmetic, so partial results combine
// the same way whichever thread or target produced them.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace hetkern {
namespace cpu {

// Rows are reduced in fixed segments of this many elements (fits L1 in
// float64): max and exp-sum of one segment come from two passes over cached
// data, and segments are combined left to right. The summation order thus
// depends only on the row length, never on the thread count.
constexpr size_t kSoftmaxSegment = 4096;

// max and sum(exp(x - max)) of a run of elements; `nan` when one was NaN.
struct SoftmaxPartial {
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  bool nan = false;
};

// exp(from - to) for from <= to, exactly 1 when equal (also for two -inf or
// two +inf, where the difference would be NaN).
inline double SoftmaxRescale(double from, double to) {
  return from == to ? 1.0 : std::exp(from - to);
}

inline SoftmaxPartial Combine(const SoftmaxPartial& a, const SoftmaxPartial& b) {
  SoftmaxPartial r;
  r.max = std::max(a.max, b.max);
  r.sum = a.sum * SoftmaxRescale(a.max, r.max) + b.sum * SoftmaxRescale(b.max, r.max);
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
// where max - max or exp(NaN) poisons the sum): all three terms NaN do that.
// Otherwise the max element contributes exp(0) = 1, so sum >= 1.
inline SoftmaxRowScale FinishRow(const SoftmaxPartial& p) {
  if (p.nan || !std::isfinite(p.max)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan};
  }
  return {p.max, 1.0 / p.sum, std::log(p.sum)};
}

}  // namespace cpu
}  // namespace hetkern
