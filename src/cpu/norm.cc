// Highway kernels of rmsnorm, fused_add_rmsnorm (both also in Gemma's style)
// and layernorm, and of their fp8-quantising forms (an output stage): one row per call of the row functions, rows spread over
// threads by ParallelFor. A row is always reduced by one thread in the order
// ReduceRow documents, so results do not depend on the thread count.
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <type_traits>

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

// A row of the RMS norms' scale: weight, or 1 + weight for Gemma (in the
// compute type), loaded from the parameters' storage type W.
template <bool kGemma, class D, class W>
HWY_INLINE hn::Vec<D> LoadScale(D d, const W* w) {
  const auto weight = LoadAs(d, w);
  if constexpr (kGemma) {
    return hn::Add(hn::Set(d, hn::TFromD<D>(1)), weight);
  } else {
    return weight;
  }
}

// Where a row's result goes: x's dtype (the plain ops), or float8_e4m3fn
// bits of clamp(y / scale) with y unrounded in the compute type (the quant
// ops, as FlashInfer's *_quant).
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
// normalised value to the storage type before the weight multiply. Gemma's
// RMSNorm rounds once: out[i] = T(v[i] * inv_rms * (1 + w[i])); the quant
// ops never round y. This pass reads v from L1; prefetch_next(i) requests
// the next row's element i meanwhile, so that memory is not left idle.
template <bool kGemma, class T, class W, class Out, class C, class PrefetchNext>
HWY_INLINE void StoreRmsNormed(const T* v, const W* w, const Out& out, size_t n, C inv_rms,
                               const PrefetchNext& prefetch_next) {
  MapRow<C>(n, [&](auto d, size_t i) HWY_ATTR {
    PrefetchAhead<1>(out.data + i);
    prefetch_next(i);
    auto normed = hn::Mul(LoadAs(d, v + i), hn::Set(d, inv_rms));
    if constexpr (!kGemma && !Out::kQuant) normed = RoundThrough<T>(d, normed);
    out(d, i, hn::Mul(normed, LoadScale<kGemma>(d, w + i)));
  });
}

// `next`: the next row's x (or x, for the last row), prefetched meanwhile.
template <bool kGemma, class T, class W, class Out>
HWY_INLINE void RMSNormRow(const T* x, const W* w, const Out& out, size_t n, double eps,
                           const T* next) {
  using C = ComputeType<T>;
  const C sum_sq = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
    PrefetchAhead(x + i);  // this row's rest, then the next row
    const auto v = LoadAs(d, x + i);
    return hn::MulAdd(v, v, acc);
  });
  StoreRmsNormed<kGemma>(x, w, out, n, InverseRms(sum_sq, n, eps),
                        [next](size_t i) HWY_ATTR { __builtin_prefetch(next + i); });
}

// residual = T(x + residual); x = rmsnorm(residual) * w. The sum is rounded to
// T before it feeds the variance, as vLLM's fused_add_rms_norm (and its
// GemmaRMSNorm, which adds in T) does.
// next_x, next_residual: the next row's, prefetched meanwhile (for writing).
template <bool kGemma, class T, class W>
HWY_INLINE void FusedAddRMSNormRow(T* x, T* residual, const W* w, size_t n, double eps,
                                   const T* next_x, const T* next_residual) {
  using C = ComputeType<T>;
  const C sum_sq = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
    PrefetchAhead(x + i);
    PrefetchAhead<1>(residual + i);
    const auto sum = StoreRounded(d, hn::Add(LoadAs(d, x + i), LoadAs(d, residual + i)), residual + i);
    return hn::MulAdd(sum, sum, acc);
  });
  StoreRmsNormed<kGemma>(residual, w, StoreRow<T>{x}, n, InverseRms(sum_sq, n, eps),
                        [next_x, next_residual](size_t i) HWY_ATTR {
                          __builtin_prefetch(next_x + i, 1);
                          __builtin_prefetch(next_residual + i, 1);
                        });
}

// FlashInfer's fused_add_rmsnorm_quant: the unrounded sum s = x + residual
// feeds the variance and the output; residual = T(s). x is only read, so
// the second pass adds again and writes residual then.
template <class T, class W, class C>
HWY_INLINE void FusedAddRMSNormQuantRow(const T* x, T* residual, const W* w,
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
// out = (x - mean) * rstd * w + b, rounded once; the write pass prefetches
// the next row's x (`next`) as StoreRmsNormed does.
template <class T, class W, class Out>
HWY_INLINE void LayerNormRow(const T* x, const W* w, const W* b, const Out& out, size_t n,
                             double eps, const T* next) {
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
    __builtin_prefetch(next + i);
    const auto normed = hn::Mul(hn::Sub(LoadAs(d, x + i), hn::Set(d, mean)), hn::Set(d, rstd));
    const auto scaled = b ? hn::MulAdd(normed, LoadAs(d, w + i), LoadAs(d, b + i))
                          : hn::Mul(normed, LoadAs(d, w + i));
    out(d, i, scaled);
  });
}

// Calls fn(TypeTag<T>{}, TypeTag<W>{}) with T the CPU storage type of
// a.dtype and W that of a.param_dtype: T itself, or float for 16-bit T
// (only the pairs the entry accepts are instantiated).
template <class Fn>
HWY_INLINE void VisitNormTypes(const NormArgs& a, Fn&& fn) {
  VisitDType<float, double, hwy::float16_t, hwy::bfloat16_t>(a.dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) == 2) {
      if (a.param_dtype == DType::kFloat32) return fn(tag, TypeTag<float>{});
    }
    fn(tag, tag);
  });
}

// Calls fn(std::bool_constant<a.gemma>{}).
template <class Fn>
HWY_INLINE void VisitGemma(const NormArgs& a, Fn&& fn) {
  if (a.gemma) {
    fn(std::true_type{});
  } else {
    fn(std::false_type{});
  }
}

// Calls fn(out) with row r's output stage: x's dtype, or the quant ops'
// float8_e4m3fn bits when a.scale is set (never with Gemma's style: no quant
// op asks for it, so it is not instantiated).
template <class T, bool kGemma, class Fn>
HWY_INLINE void WithRowOutput(const NormArgs& a, int64_t r, Fn&& fn) {
  using C = ComputeType<T>;
  if constexpr (!kGemma) {
    if (a.scale != nullptr) {
      return fn(QuantRow<C>{static_cast<uint8_t*>(a.out) + r * a.out_stride,
                            static_cast<C>(*a.scale)});
    }
  }
  fn(StoreRow<T>{static_cast<T*>(a.out) + r * a.out_stride});
}

// Rows [begin, end) of each op; row offsets in int64 (row * stride may
// exceed 2^31).
void RMSNormKernel(const NormArgs& a, int64_t begin, int64_t end) {
  VisitNormTypes(a, [&](auto t_tag, auto w_tag) HWY_ATTR {
    using T = typename decltype(t_tag)::type;
    using W = typename decltype(w_tag)::type;
    VisitGemma(a, [&](auto gemma) HWY_ATTR {
      constexpr bool kGemma = decltype(gemma)::value;
      const size_t h = static_cast<size_t>(a.hidden);
      for (int64_t r = begin; r < end; ++r) {
        WithRowOutput<T, kGemma>(a, r, [&](const auto& out) HWY_ATTR {
          const T* x = static_cast<const T*>(a.x) + r * a.x_stride;
          RMSNormRow<kGemma>(x, static_cast<const W*>(a.weight), out, h, a.eps,
                             r + 1 < end ? x + a.x_stride : x);
        });
      }
    });
  });
}

void FusedAddRMSNormKernel(const NormArgs& a, int64_t begin, int64_t end) {
  VisitNormTypes(a, [&](auto t_tag, auto w_tag) HWY_ATTR {
    using T = typename decltype(t_tag)::type;
    using W = typename decltype(w_tag)::type;
    using C = ComputeType<T>;
    const size_t h = static_cast<size_t>(a.hidden);
    const auto* w = static_cast<const W*>(a.weight);
    if (a.scale != nullptr) {
      const QuantRow<C> out{static_cast<uint8_t*>(a.out), static_cast<C>(*a.scale)};
      for (int64_t r = begin; r < end; ++r) {
        FusedAddRMSNormQuantRow(static_cast<const T*>(a.x) + r * a.x_stride,
                                static_cast<T*>(a.residual) + r * a.residual_stride, w,
                                QuantRow<C>{out.data + r * a.out_stride, out.scale}, h, a.eps);
      }
      return;
    }
    VisitGemma(a, [&](auto gemma) HWY_ATTR {
      for (int64_t r = begin; r < end; ++r) {
        T* x = static_cast<T*>(a.out) + r * a.out_stride;
        T* residual = static_cast<T*>(a.residual) + r * a.residual_stride;
        const bool last = r + 1 == end;
        FusedAddRMSNormRow<decltype(gemma)::value>(x, residual, w, h, a.eps,
                                                   last ? x : x + a.out_stride,
                                                   last ? residual : residual + a.residual_stride);
      }
    });
  });
}

void LayerNormKernel(const NormArgs& a, int64_t begin, int64_t end) {
  VisitNormTypes(a, [&](auto t_tag, auto w_tag) HWY_ATTR {
    using T = typename decltype(t_tag)::type;
    using W = typename decltype(w_tag)::type;
    const size_t h = static_cast<size_t>(a.hidden);
    for (int64_t r = begin; r < end; ++r) {
      WithRowOutput<T, false>(a, r, [&](const auto& out) HWY_ATTR {
        const T* x = static_cast<const T*>(a.x) + r * a.x_stride;
        LayerNormRow(x, static_cast<const W*>(a.weight), static_cast<const W*>(a.bias), out, h,
                     a.eps, r + 1 < end ? x + a.x_stride : x);
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
