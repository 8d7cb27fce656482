// Highway kernels of rmsnorm, fused_add_rmsnorm (both also in Gemma's style)
// and layernorm, and of their fp8-quantising forms (an output stage): one row per call of the row functions, rows spread over
// threads by ParallelFor. A row is always reduced by one thread in the order
// ReduceRow documents, so results do not depend on the thread count.
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <limits>
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

// The same for a split pair of bfloat16 weights.
template <bool kGemma, class D>
HWY_INLINE SplitPair<D> LoadSplitScale(D d, const hwy::bfloat16_t* w) {
  const auto weight = LoadSplitPair(d, w);
  if constexpr (kGemma) {
    const auto one = hn::Set(d, 1.0f);
    return {hn::Add(one, weight.even), hn::Add(one, weight.odd)};
  } else {
    return weight;
  }
}

// Where a row's result goes: x's dtype (the plain ops), or float8_e4m3fn
// bits of clamp(y / scale) with y unrounded in the compute type (the quant
// ops, as FlashInfer's *_quant).
template <class T, bool kNoSubnormals = false>
struct StoreRow {
  static constexpr bool kQuant = false;
  T* data;
  template <class D>
  HWY_INLINE void operator()(D d, size_t i, hn::Vec<D> y) const {
    StoreAs<kNoSubnormals>(y, d, data + i);
  }
  template <class D>
  HWY_INLINE void operator()(D d, size_t i, const SplitPair<D>& y) const {
    StoreSplitPair<kNoSubnormals>(d, y, data + i);
  }
};

// Whether rows of T with parameters of type W go through their write pass
// in split pairs (convert-inl.h): bfloat16 rows and parameters where
// two float32 vectors narrow together. The results are those of the vector
// loop, bit for bit (lane-wise arithmetic in the same order); only the
// conversions are cheaper. Float32 parameters would need their lanes split
// by a permute, and keep the vector loop. The quant ops' rows too: their
// e4m3 codes are put back in order in 16-bit words (StoreE4M3Pair).
template <class T, class W>
constexpr bool kWritesSplitPairs = kNarrowsInPairs<T> && hwy::IsSame<W, T>();

// a * b lane by lane, and a * b + c.
template <class D>
HWY_INLINE SplitPair<D> Mul(const SplitPair<D>& a, const SplitPair<D>& b) {
  return {hn::Mul(a.even, b.even), hn::Mul(a.odd, b.odd)};
}
template <class D>
HWY_INLINE SplitPair<D> MulAdd(const SplitPair<D>& a, const SplitPair<D>& b,
                               const SplitPair<D>& c) {
  return {hn::MulAdd(a.even, b.even, c.even), hn::MulAdd(a.odd, b.odd, c.odd)};
}

// Rows of at least this many in one call pass over the parameters once to
// attempt a proof: the weight's smallest magnitude (RowNarrowsNormal), or
// finite parameters (FiniteQuantParams).
constexpr int64_t kMinRowsToProveNormal = 8;

// The smallest nonzero |w[i]|, i < n, as a double; +inf if all are zero.
template <class W>
HWY_INLINE double SmallestNonzeroMagnitude(const W* w, size_t n) {
  const hn::ScalableTag<float> d;
  const auto inf = hn::Set(d, std::numeric_limits<float>::infinity());
  auto smallest = inf;
  const auto visit = [&](hn::Vec<decltype(d)> v) HWY_ATTR {
    const auto magnitude = hn::Abs(v);
    smallest = hn::Min(smallest, hn::IfThenElse(hn::Eq(magnitude, hn::Zero(d)), inf, magnitude));
  };
  size_t i = 0;
  for (; i + hn::Lanes(d) <= n; i += hn::Lanes(d)) visit(LoadAs(d, w + i));
  if (i < n) visit(LoadNOrAs(inf, d, w + i, n - i));
  return hn::GetLane(hn::MinOfLanes(d, smallest));
}

// The same for a bfloat16 row, cheaply (a quarter of the instructions): on
// the bits as uint16 lanes, magnitude - 1 wraps zero to the largest value.
HWY_INLINE double SmallestNonzeroMagnitude(const hwy::bfloat16_t* x, size_t n) {
  const hn::ScalableTag<uint16_t> d;
  const auto* bits = reinterpret_cast<const uint16_t*>(x);
  const auto magnitude_mask = hn::Set(d, uint16_t{0x7FFF}), one = hn::Set(d, uint16_t{1});
  auto smallest = hn::Set(d, uint16_t{0xFFFF});
  size_t i = 0;
  for (; i + hn::Lanes(d) <= n; i += hn::Lanes(d)) {
    smallest = hn::Min(smallest, hn::Sub(hn::And(hn::LoadU(d, bits + i), magnitude_mask), one));
  }
  if (i < n) {
    const auto tail = hn::LoadNOr(hn::Zero(d), d, bits + i, n - i);  // zeros: skipped
    smallest = hn::Min(smallest, hn::Sub(hn::And(tail, magnitude_mask), one));
  }
  const uint32_t smallest_bits = hn::GetLane(hn::MinOfLanes(d, smallest));
  if (smallest_bits == 0xFFFF) return std::numeric_limits<double>::infinity();
  return hwy::BitCastScalar<float>((smallest_bits + 1) << 16);
}

// Whether no value of an RMS row that is narrowed to bfloat16 can be
// subnormal: with m the row's smallest nonzero |x|, a nonzero x * inv_rms is
// at least m inv_rms, and its product with the weight (after rounding to
// bfloat16, less than 2^-8 off) at least m inv_rms min_weight / 2; both
// with a factor of 2 to spare for the float32 roundings. Zeros narrow
// exactly; NaN rows (inv_rms NaN) and rows with inf (inv_rms 0) fail it.
template <class T>
HWY_INLINE bool RowNarrowsNormal(const T* x, size_t n, float inv_rms, double min_weight) {
  const double m = SmallestNonzeroMagnitude(x, n) * inv_rms;
  return m >= 0x1p-125 && m * min_weight >= 0x1p-123;
}

// The quant ops' output stage. finite_params: FiniteQuantParams's verdict
// for the call. kMayBeNaN =
// false (NaNFree, WithNaNProof) where the row's y are known not to be NaN:
// the conversion then leaves out its NaN select, 2 of the ~23 vector
// operations a vector of the write pass (AVX3_SPR, 1-2 threads, 32-4096
// rows of 4096: the quant ops take 0.86-0.97 of their time, float32
// rmsnorm_quant the least; benchmarks/results/cpu-2026-12-06-stop57).
template <class C, bool kMayBeNaN = true>
struct QuantRow {
  static constexpr bool kQuant = true;
  uint8_t* data;
  QuantDivisor<C> divisor;
  bool finite_params;
  template <class D>
  HWY_INLINE void operator()(D d, size_t i, hn::Vec<D> y) const {
    divisor.template Store<kMayBeNaN>(d, y, data + i);
  }
  template <class D>
  HWY_INLINE void operator()(D d, size_t i, const SplitPair<D>& y) const {
    divisor.template StorePair<kMayBeNaN>(d, y.even, y.odd, data + i);
  }
  QuantRow<C, false> NaNFree() const { return {data, divisor, finite_params}; }
};

// Calls fn(out.NaNFree()) where out is a quant stage with finite parameters
// and the row's statistics (its reductions and their 1 / sqrt) are finite,
// else fn(out). Finite sums mean finite x (an infinity or NaN would carry
// into them), and then each normalised value is finite (at most about
// sqrt(n) in magnitude), so y = normalised * w (+ b) is finite or an
// overflow's infinity, never NaN, and neither is y / scale.
template <class Out, class Fn>
HWY_INLINE void WithNaNProof(const Out& out, bool row_statistics_finite, Fn&& fn) {
  if constexpr (Out::kQuant) {
    if (out.finite_params && row_statistics_finite) return fn(out.NaNFree());
  }
  fn(out);
}

// Whether the n values at p are all finite: a finite value times 0 is 0,
// an infinity or NaN gives NaN, which the sum keeps.
template <class C, class W>
HWY_INLINE bool AllFinite(const W* p, size_t n) {
  return ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
           return hn::MulAdd(LoadAs(d, p + i), hn::Zero(d), acc);
         }) == C(0);
}

// Whether a quant call's weight, bias and scale are finite and the scale
// nonzero; attempted, as the subnormal proof, from kMinRowsToProveNormal
// rows (the pass over the parameters costs up to 3 operations a vector,
// each row saves 2; fewer rows were not measured).
template <class C, class W>
HWY_INLINE bool FiniteQuantParams(const NormArgs& a, int64_t rows) {
  if (a.scale == nullptr || rows < kMinRowsToProveNormal) return false;
  const C scale = static_cast<C>(*a.scale);
  const size_t n = static_cast<size_t>(a.hidden);
  return std::isfinite(scale) && scale != C(0) && AllFinite<C>(static_cast<const W*>(a.weight), n) &&
         (a.bias == nullptr || AllFinite<C>(static_cast<const W*>(a.bias), n));
}

// out[i] = T(T(v[i] * inv_rms) * w[i]): vLLM's rms_norm rounds the
// normalised value to the storage type before the weight multiply. Gemma's
// RMSNorm rounds once: out[i] = T(v[i] * inv_rms * (1 + w[i])); the quant
// ops never round y. This pass reads v from L1; prefetch_next(i) requests
// the next row's element i meanwhile, so that memory is not left idle.
// kNoSubnormals: the row is proven to narrow no subnormal (RowNarrowsNormal).
template <bool kGemma, bool kNoSubnormals = false, class T, class W, class Out, class C,
          class PrefetchNext>
HWY_INLINE void StoreRmsNormed(const T* v, const W* w, const Out& out, size_t n, C inv_rms,
                               const PrefetchNext& prefetch_next) {
  size_t begin = 0;
  if constexpr (kWritesSplitPairs<T, W>) {
    begin = ForEachPairOfVectors<C>(n, [&](auto d, size_t i) HWY_ATTR {
      PrefetchAhead<1>(out.data + i);
      prefetch_next(i);
      const auto inv = hn::Set(d, inv_rms);
      const auto x = LoadSplitPair(d, v + i);
      SplitPair<decltype(d)> normed{hn::Mul(x.even, inv), hn::Mul(x.odd, inv)};
      if constexpr (!kGemma && !Out::kQuant) normed = RoundedToBF16<kNoSubnormals>(d, normed);
      out(d, i, Mul(normed, LoadSplitScale<kGemma>(d, w + i)));
    });
  }
  MapRow<C>(begin, n, [&](auto d, size_t i) HWY_ATTR {
    PrefetchAhead<1>(out.data + i);
    prefetch_next(i);
    auto normed = hn::Mul(LoadAs(d, v + i), hn::Set(d, inv_rms));
    if constexpr (!kGemma && !Out::kQuant) normed = RoundThrough<T, kNoSubnormals>(d, normed);
    out(d, i, hn::Mul(normed, LoadScale<kGemma>(d, w + i)));
  });
}

// vLLM's rounding of x * inv_rms and the store narrow to T, with the
// subnormal check of the native bfloat16 narrowing unless the row proves it
// unneeded (min_weight: the weight's smallest nonzero magnitude, 0 if not
// known).
template <bool kGemma, class T, class W, class Out, class C, class PrefetchNext>
HWY_INLINE void StoreRmsRow(const T* v, const W* w, const Out& out, size_t n, C inv_rms,
                            double min_weight, const PrefetchNext& prefetch_next) {
  if constexpr (kNarrowsNatively<T> && !kGemma && !Out::kQuant) {
    if (RowNarrowsNormal(v, n, inv_rms, min_weight)) {
      StoreRmsNormed<kGemma, true>(v, w, StoreRow<T, true>{out.data}, n, inv_rms, prefetch_next);
      return;
    }
  }
  StoreRmsNormed<kGemma>(v, w, out, n, inv_rms, prefetch_next);
}

// `next`: the next row's x (or x, for the last row), prefetched meanwhile.
template <bool kGemma, class T, class W, class Out>
HWY_INLINE void RMSNormRow(const T* x, const W* w, const Out& out, size_t n, double eps,
                           double min_weight, const T* next) {
  using C = ComputeType<T>;
  const C sum_sq = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
    PrefetchAhead(x + i);  // this row's rest, then the next row
    const auto v = LoadAs(d, x + i);
    return hn::MulAdd(v, v, acc);
  });
  const C inv_rms = InverseRms(sum_sq, n, eps);
  WithNaNProof(out, std::isfinite(sum_sq) && std::isfinite(inv_rms), [&](const auto& row_out) HWY_ATTR {
    StoreRmsRow<kGemma>(x, w, row_out, n, inv_rms, min_weight,
                        [next](size_t i) HWY_ATTR { __builtin_prefetch(next + i); });
  });
}

// residual = T(x + residual); x = rmsnorm(residual) * w. The sum is rounded to
// T before it feeds the variance, as vLLM's fused_add_rms_norm (and its
// GemmaRMSNorm, which adds in T) does.
// next_x, next_residual: the next row's, prefetched meanwhile (for writing).
template <bool kGemma, class T, class W>
HWY_INLINE void FusedAddRMSNormRow(T* x, T* residual, const W* w, size_t n, double eps,
                                   double min_weight, const T* next_x, const T* next_residual) {
  using C = ComputeType<T>;
  const auto step = [&](auto d, size_t i, auto acc) HWY_ATTR {
    PrefetchAhead(x + i);
    PrefetchAhead<1>(residual + i);
    const auto sum = StoreRounded(d, hn::Add(LoadAs(d, x + i), LoadAs(d, residual + i)), residual + i);
    return hn::MulAdd(sum, sum, acc);
  };
  C sum_sq;
  if constexpr (kNarrowsInPairs<T>) {
    // Two vectors' sums from split pairs, rounded together and squared in
    // element order: ReduceRow's sums, with half the conversions.
    sum_sq = ReduceRowInPairs<C>(
        n,
        [&](auto d, size_t i, auto& acc_a, auto& acc_b) HWY_ATTR {
          PrefetchAhead(x + i);
          PrefetchAhead<1>(residual + i);
          const auto x_pair = LoadSplitPair(d, x + i), r_pair = LoadSplitPair(d, residual + i);
          hn::Vec<decltype(d)> first, second;
          StoreRoundedInOrder(d, {hn::Add(x_pair.even, r_pair.even), hn::Add(x_pair.odd, r_pair.odd)},
                              residual + i, first, second);
          acc_a = hn::MulAdd(first, first, acc_a);
          acc_b = hn::MulAdd(second, second, acc_b);
        },
        step);
  } else {
    sum_sq = ReduceRow<C>(n, step);
  }
  StoreRmsRow<kGemma>(residual, w, StoreRow<T>{x}, n, InverseRms(sum_sq, n, eps), min_weight,
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
                                        const QuantRow<C>& quant_out, size_t n, double eps) {
  const C sum_sq = ReduceRow<C>(n, [&](auto d, size_t i, auto acc) HWY_ATTR {
    PrefetchAhead(x + i);
    PrefetchAhead(residual + i);
    const auto sum = hn::Add(LoadAs(d, x + i), LoadAs(d, residual + i));
    return hn::MulAdd(sum, sum, acc);
  });
  const C inv_rms = InverseRms(sum_sq, n, eps);
  WithNaNProof(quant_out, std::isfinite(sum_sq) && std::isfinite(inv_rms), [&](const auto& out) HWY_ATTR {
    size_t begin = 0;
    if constexpr (kWritesSplitPairs<T, W>) {
      begin = ForEachPairOfVectors<C>(n, [&](auto d, size_t i) HWY_ATTR {
        PrefetchAhead<1>(out.data + i);
        const auto x_pair = LoadSplitPair(d, x + i), r_pair = LoadSplitPair(d, residual + i);
        const SplitPair<decltype(d)> sum{hn::Add(x_pair.even, r_pair.even), hn::Add(x_pair.odd, r_pair.odd)};
        StoreSplitPair(d, sum, residual + i);
        const auto inv = hn::Set(d, inv_rms);
        const SplitPair<decltype(d)> normed{hn::Mul(sum.even, inv), hn::Mul(sum.odd, inv)};
        out(d, i, Mul(normed, LoadSplitPair(d, w + i)));
      });
    }
    MapRow<C>(begin, n, [&](auto d, size_t i) HWY_ATTR {
      PrefetchAhead<1>(out.data + i);
      const auto sum = hn::Add(LoadAs(d, x + i), LoadAs(d, residual + i));
      StoreAs(sum, d, residual + i);
      out(d, i, hn::Mul(hn::Mul(sum, hn::Set(d, inv_rms)), LoadAs(d, w + i)));
    });
  });
}

// Two-pass mean and variance (stable for large means), then
// out = (x - mean) * rstd * w + b, rounded once; the write pass prefetches
// the next row's x (`next`) as StoreRmsNormed does.
template <class T, class W, class Out>
HWY_INLINE void LayerNormRow(const T* x, const W* w, const W* b, const Out& row_out, size_t n,
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
  const bool statistics_finite = std::isfinite(mean) && std::isfinite(sum_sq_dev) && std::isfinite(rstd);
  WithNaNProof(row_out, statistics_finite, [&](const auto& out) HWY_ATTR {
    size_t begin = 0;
    if constexpr (kWritesSplitPairs<T, W>) {
      begin = ForEachPairOfVectors<C>(n, [&](auto d, size_t i) HWY_ATTR {
        PrefetchAhead<1>(out.data + i);
        __builtin_prefetch(next + i);
        const auto x_pair = LoadSplitPair(d, x + i);
        const auto mean_v = hn::Set(d, mean), rstd_v = hn::Set(d, rstd);
        const SplitPair<decltype(d)> normed{hn::Mul(hn::Sub(x_pair.even, mean_v), rstd_v),
                                            hn::Mul(hn::Sub(x_pair.odd, mean_v), rstd_v)};
        const auto weight = LoadSplitPair(d, w + i);
        out(d, i, b ? MulAdd(normed, weight, LoadSplitPair(d, b + i)) : Mul(normed, weight));
      });
    }
    MapRow<C>(begin, n, [&](auto d, size_t i) HWY_ATTR {
      PrefetchAhead<1>(out.data + i);
      __builtin_prefetch(next + i);
      const auto normed = hn::Mul(hn::Sub(LoadAs(d, x + i), hn::Set(d, mean)), hn::Set(d, rstd));
      const auto scaled = b ? hn::MulAdd(normed, LoadAs(d, w + i), LoadAs(d, b + i))
                            : hn::Mul(normed, LoadAs(d, w + i));
      out(d, i, scaled);
    });
  });
}

// Calls fn(TypeTag<T>{}, TypeTag<W>{}) with T the CPU storage type of
// a.dtype and W that of a.param_dtype: T itself, or float for 16-bit T
// (only the pairs the entry accepts are instantiated).
template <class Fn>
HWY_INLINE void VisitNormTypes(const NormArgs& a, Fn&& fn) {
  VisitCpuType(a.dtype, [&](auto tag) HWY_ATTR {
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
// finite_params: FiniteQuantParams's verdict for the call.
template <class T, bool kGemma, class Fn>
HWY_INLINE void WithRowOutput(const NormArgs& a, int64_t r, bool finite_params, Fn&& fn) {
  using C = ComputeType<T>;
  if constexpr (!kGemma) {
    if (a.scale != nullptr) {
      return fn(QuantRow<C>{static_cast<uint8_t*>(a.out) + r * a.out_stride,
                            QuantDivisor<C>(static_cast<C>(*a.scale)), finite_params});
    }
  }
  fn(StoreRow<T>{static_cast<T*>(a.out) + r * a.out_stride});
}

// The weight's smallest nonzero magnitude where rows of T may use it to
// skip the subnormal checks (RowNarrowsNormal), else 0 (no row proves it).
template <class T, class W>
HWY_INLINE double MinWeightForProof(const NormArgs& a, int64_t rows) {
  if constexpr (kNarrowsNatively<T>) {
    if (!a.gemma && a.scale == nullptr && rows >= kMinRowsToProveNormal) {
      return SmallestNonzeroMagnitude(static_cast<const W*>(a.weight), static_cast<size_t>(a.hidden));
    }
  }
  (void)a, (void)rows;
  return 0.0;
}

// Rows [begin, end) of each op; row offsets in int64 (row * stride may
// exceed 2^31).
void RMSNormKernel(const NormArgs& a, int64_t begin, int64_t end) {
  VisitNormTypes(a, [&](auto t_tag, auto w_tag) HWY_ATTR {
    using T = typename decltype(t_tag)::type;
    using W = typename decltype(w_tag)::type;
    const double min_weight = MinWeightForProof<T, W>(a, end - begin);
    const bool finite_params = FiniteQuantParams<ComputeType<T>, W>(a, end - begin);
    VisitGemma(a, [&](auto gemma) HWY_ATTR {
      constexpr bool kGemma = decltype(gemma)::value;
      const size_t h = static_cast<size_t>(a.hidden);
      for (int64_t r = begin; r < end; ++r) {
        WithRowOutput<T, kGemma>(a, r, finite_params, [&](const auto& out) HWY_ATTR {
          const T* x = static_cast<const T*>(a.x) + r * a.x_stride;
          RMSNormRow<kGemma>(x, static_cast<const W*>(a.weight), out, h, a.eps, min_weight,
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
      const QuantDivisor<C> divisor(static_cast<C>(*a.scale));
      const bool finite_params = FiniteQuantParams<C, W>(a, end - begin);
      for (int64_t r = begin; r < end; ++r) {
        FusedAddRMSNormQuantRow(
            static_cast<const T*>(a.x) + r * a.x_stride, static_cast<T*>(a.residual) + r * a.residual_stride, w,
            QuantRow<C>{static_cast<uint8_t*>(a.out) + r * a.out_stride, divisor, finite_params}, h, a.eps);
      }
      return;
    }
    const double min_weight = MinWeightForProof<T, W>(a, end - begin);
    VisitGemma(a, [&](auto gemma) HWY_ATTR {
      for (int64_t r = begin; r < end; ++r) {
        T* x = static_cast<T*>(a.out) + r * a.out_stride;
        T* residual = static_cast<T*>(a.residual) + r * a.residual_stride;
        const bool last = r + 1 == end;
        FusedAddRMSNormRow<decltype(gemma)::value>(x, residual, w, h, a.eps, min_weight,
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
    const bool finite_params = FiniteQuantParams<ComputeType<T>, W>(a, end - begin);
    for (int64_t r = begin; r < end; ++r) {
      WithRowOutput<T, false>(a, r, finite_params, [&](const auto& out) HWY_ATTR {
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
