// Highway kernels of rmsnorm, fused_add_rmsnorm and layernorm: one row per
// call of the row functions, rows spread over threads by ParallelFor. A row is
// always reduced by one thread in the order ReduceRow documents, so results
// do not depend on the thread count.
#include <stddef.h>
#include <stdint.h>

#include <cmath>

#include "src/core/kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/norm.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "src/cpu/elementwise-inl.h"  // PrefetchAhead
#include "src/cpu/fp8-inl.h"
#include "src/cpu/norm-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 1 / sqrt(sum_sq / n + eps) in the compute type, correctly rounded steps.
template <class C>
HWY_INLINE C InverseRms(C sum_sq, size_t n, double eps) {
  return C(1) / std::sqrt(sum_sq / static_cast<C>(n) + static_cast<C>(eps));
}

// Where a row's result goes: x's dtype (the plain ops, which round the
// normalised value as vLLM does), or float8_e4m3fn bits of clamp(y / scale)
// with y unrounded in the compute type (the quant ops, as FlashInfer's).
template <class T>
struct StoreRow {
  static constexpr bool kQuant = false;
  T* data;
  template <class D>
  HWY_INLINE void operator()(D d, size_t i, hn::Vec<D> y) const {
    StoreAs(y, d, data + i);
  }
};

template <class C>
struct QuantRow {
  static constexpr bool kQuant = true;
  uint8_t* data;
  C scale;
  template <class D>
  HWY_INLINE void operator()(D d, size_t i, hn::Vec<D> y) const {
    StoreE4M3(d, hn::Div(y, hn::Set(d, scale)), data + i);
  }
};

// out[i] = T(T(v[i] * inv_rms) * w[i]): vLLM's rms_norm rounds the
// normalised value to the storage type before the weight multiply; the
// quant ops keep it unrounded.
template <class T, class Out, class C>
HWY_INLINE void StoreRmsNormed(const T* v, const T* w, const Out& out, size_t n, C inv_rms) {
  MapRow<C>(n, [&](auto d, size_t i) HWY_ATTR {
    PrefetchAhead<1>(out.data + i);
    auto normed = hn::Mul(LoadAs(d, v + i), hn::Set(d, inv_rms));
    if constexpr (!Out::kQuant) normed = RoundThrough<T>(d, normed);
    out(d, i, hn::Mul(normed, LoadAs(d, w + i)));
  });
}

template <class T, class Out>
HWY_INLINE void RMSNormRow(const T* x, const T* w, const Out& out, size_t n, double eps) {
  using C = ComputeType<T>;
  const C sum_sq = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
    PrefetchAhead(x + i);  // this row's rest, then the next row
    const auto v = LoadAs(d, x + i);
    return hn::MulAdd(v, v, acc);
  });
  StoreRmsNormed(x, w, out, n, InverseRms(sum_sq, n, eps));
}

// residual = T(x + residual); x = rmsnorm(residual) * w. The sum is rounded to
// T before it feeds the variance, as vLLM's fused_add_rms_norm does.
template <class T>
HWY_INLINE void FusedAddRMSNormRow(T* x, T* residual, const T* w, size_t n, double eps) {
  using C = ComputeType<T>;
  const C sum_sq = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
    PrefetchAhead(x + i);
    PrefetchAhead<1>(residual + i);
    const auto sum = RoundThrough<T>(d, hn::Add(LoadAs(d, x + i), LoadAs(d, residual + i)));
    StoreAs(sum, d, residual + i);
    return hn::MulAdd(sum, sum, acc);
  });
  StoreRmsNormed(residual, w, StoreRow<T>{x}, n, InverseRms(sum_sq, n, eps));
}

// FlashInfer's fused_add_rmsnorm_quant: the unrounded sum s = x + residual
// feeds the variance and the output; residual = T(s). x is only read, so
// the second pass adds again and writes residual then.
template <class T, class C>
HWY_INLINE void FusedAddRMSNormQuantRow(const T* x, T* residual, const T* w,
                                        const QuantRow<C>& out, size_t n, double eps) {
  const C sum_sq = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
    PrefetchAhead(x + i);
    PrefetchAhead(residual + i);
    const auto sum = hn::Add(LoadAs(d, x + i), LoadAs(d, residual + i));
    return hn::MulAdd(sum, sum, acc);
  });
  const C inv_rms = InverseRms(sum_sq, n, eps);
  MapRow<C>(n, [&](auto d, size_t i) HWY_ATTR {
    PrefetchAhead<1>(out.data + i);
    const auto sum = hn::Add(LoadAs(d, x + i), LoadAs(d, residual + i));
    StoreAs(sum, d, residual + i);
    out(d, i, hn::Mul(hn::Mul(sum, hn::Set(d, inv_rms)), LoadAs(d, w + i)));
  });
}

// Two-pass mean and variance (stable for large means), then
// out = (x - mean) * rstd * w + b, rounded once.
template <class T, class Out>
HWY_INLINE void LayerNormRow(const T* x, const T* w, const T* b, const Out& out, size_t n,
                             double eps) {
  using C = ComputeType<T>;
  const C mean = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
                   PrefetchAhead(x + i);
                   return hn::Add(acc, LoadAs(d, x + i));
                 }) /
                 static_cast<C>(n);
  const C sum_sq_dev = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
    const auto dev = hn::Sub(LoadAs(d, x + i), hn::Set(d, mean));
    return hn::MulAdd(dev, dev, acc);
  });
  const C rstd = InverseRms(sum_sq_dev, n, eps);
  MapRow<C>(n, [&](auto d, size_t i) HWY_ATTR {
    PrefetchAhead<1>(out.data + i);
    const auto normed = hn::Mul(hn::Sub(LoadAs(d, x + i), hn::Set(d, mean)), hn::Set(d, rstd));
    const auto scaled = b ? hn::MulAdd(normed, LoadAs(d, w + i), LoadAs(d, b + i))
                          : hn::Mul(normed, LoadAs(d, w + i));
    out(d, i, scaled);
  });
}

// Calls fn(TypeTag<T>{}) with T the CPU storage type of `dtype`.
template <class Fn>
HWY_INLINE void VisitCpuType(DType dtype, Fn&& fn) {
  VisitDType<float, double, hwy::float16_t, hwy::bfloat16_t>(dtype, fn);
}

// Calls fn(out) with the output stage of row r: x's dtype, or the quant
// ops' float8_e4m3fn bits when a.scale is set.
template <class T, class Fn>
HWY_INLINE void WithRowOutput(const NormArgs& a, int64_t r, Fn&& fn) {
  using C = ComputeType<T>;
  if (a.scale != nullptr) {
    fn(QuantRow<C>{static_cast<uint8_t*>(a.out) + r * a.out_stride, static_cast<C>(*a.scale)});
  } else {
    fn(StoreRow<T>{static_cast<T*>(a.out) + r * a.out_stride});
  }
}

// Rows [begin, end) of each op; row offsets in int64 (row * stride may
// exceed 2^31).
void RMSNormKernel(const NormArgs& a, int64_t begin, int64_t end) {
  VisitCpuType(a.dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    const size_t h = static_cast<size_t>(a.hidden);
    for (int64_t r = begin; r < end; ++r) {
      WithRowOutput<T>(a, r, [&](const auto& out) HWY_ATTR {
        RMSNormRow(static_cast<const T*>(a.x) + r * a.x_stride, static_cast<const T*>(a.weight),
                   out, h, a.eps);
      });
    }
  });
}

void FusedAddRMSNormKernel(const NormArgs& a, int64_t begin, int64_t end) {
  VisitCpuType(a.dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const size_t h = static_cast<size_t>(a.hidden);
    for (int64_t r = begin; r < end; ++r) {
      T* residual = static_cast<T*>(a.residual) + r * a.residual_stride;
      const auto* w = static_cast<const T*>(a.weight);
      if (a.scale != nullptr) {
        FusedAddRMSNormQuantRow(
            static_cast<const T*>(a.x) + r * a.x_stride, residual, w,
            QuantRow<C>{static_cast<uint8_t*>(a.out) + r * a.out_stride, static_cast<C>(*a.scale)},
            h, a.eps);
      } else {
        FusedAddRMSNormRow(static_cast<T*>(a.out) + r * a.out_stride, residual, w, h, a.eps);
      }
    }
  });
}

void LayerNormKernel(const NormArgs& a, int64_t begin, int64_t end) {
  VisitCpuType(a.dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    const size_t h = static_cast<size_t>(a.hidden);
    for (int64_t r = begin; r < end; ++r) {
      WithRowOutput<T>(a, r, [&](const auto& out) HWY_ATTR {
        LayerNormRow(static_cast<const T*>(a.x) + r * a.x_stride, static_cast<const T*>(a.weight),
                     static_cast<const T*>(a.bias), out, h, a.eps);
      });
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>

#include "src/cpu/parallel.h"

namespace hetkern {
namespace cpu {

// Below this many elements per thread, waking threads costs more than it
// saves; work is split by whole rows.
constexpr int64_t kNormMinChunkElements = 1 << 14;

HWY_EXPORT(RMSNormKernel);
HWY_EXPORT(FusedAddRMSNormKernel);
HWY_EXPORT(LayerNormKernel);

namespace {

template <class Kernel>
void ForRows(const NormArgs& args, Kernel kernel) {
  const int64_t min_rows = std::max<int64_t>(1, kNormMinChunkElements / args.hidden);
  ParallelFor(args.rows, min_rows, 1, [&](int64_t begin, int64_t end) { kernel(args, begin, end); });
}

}  // namespace

void RMSNorm(const NormArgs& args) { ForRows(args, HWY_DYNAMIC_DISPATCH(RMSNormKernel)); }

void FusedAddRMSNorm(const NormArgs& args) {
  ForRows(args, HWY_DYNAMIC_DISPATCH(FusedAddRMSNormKernel));
}

void LayerNorm(const NormArgs& args) { ForRows(args, HWY_DYNAMIC_DISPATCH(LayerNormKernel)); }

}  // namespace cpu
}  // namespace hetkern
#endif  // HWY_ONCE
