// Highway kernels of the elementwise ops, compiled once per SIMD target and
// dispatched at run time to the best one this CPU supports.
#include <stddef.h>

#include <type_traits>

#include "src/core/kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/elementwise.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "src/cpu/elementwise-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct ScaleOp {
  double factor;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> v) const {
    // Rounded to the compute type first, as torch and NumPy do.
    return hn::Mul(v, hn::Set(d, static_cast<hn::TFromD<D>>(factor)));
  }
};

void ScaleKernel(DType dtype, const void* x, void* out, size_t n, double factor) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    MapUnary<kPrefetchLightLoops>(static_cast<const T*>(x), static_cast<T*>(out), n,
                                  ScaleOp{factor});
  });
}

// x (op) y on compute vectors: one IEEE operation, one rounding.
template <BinaryOp kOp>
struct BinaryFn {
  template <class D, class V>
  HWY_INLINE V operator()(D, V x, V y) const {
    if constexpr (kOp == BinaryOp::kAdd) return hn::Add(x, y);
    if constexpr (kOp == BinaryOp::kSub) return hn::Sub(x, y);
    if constexpr (kOp == BinaryOp::kMul) return hn::Mul(x, y);
    if constexpr (kOp == BinaryOp::kDiv) return hn::Div(x, y);
  }
};

// A binary functor with y a number, rounded to the compute type first.
template <class Fn>
struct WithScalarY {
  Fn fn;
  double y;
  template <class D>
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x) const {
    return fn(d, x, hn::Set(d, static_cast<hn::TFromD<D>>(y)));
  }
};

// a*x + b*y with each product rounded: Mul and Add stay separate (no FMA), as
// torch's a*x + b*y evaluates them.
struct AxpbyFn {
  double a, b;
  template <class D, class V>
  HWY_INLINE V operator()(D d, V x, V y) const {
    using C = hn::TFromD<D>;
    return hn::Add(hn::Mul(hn::Set(d, static_cast<C>(a)), x),
                   hn::Mul(hn::Set(d, static_cast<C>(b)), y));
  }
};

void BinaryKernel(DType dtype, BinaryOp op, const void* x, const void* y, size_t period,
                  void* out, size_t begin, size_t end) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    VisitBinaryOp<BinaryFn>(op, [&](auto fn) HWY_ATTR {
      MapBinaryPeriodic<kPrefetchLightLoops>(static_cast<const T*>(x), static_cast<const T*>(y),
                                             period, static_cast<T*>(out), begin, end, fn);
    });
  });
}

void BinaryScalarKernel(DType dtype, BinaryOp op, const void* x, void* out, size_t n, double y) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    VisitBinaryOp<BinaryFn>(op, [&](auto fn) HWY_ATTR {
      MapUnary<kPrefetchLightLoops>(static_cast<const T*>(x), static_cast<T*>(out), n,
                                    WithScalarY<decltype(fn)>{fn, y});
    });
  });
}

void AxpbyKernel(DType dtype, const void* x, const void* y, size_t period, void* out,
                 size_t begin, size_t end, double a, double b) {
  VisitCpuType(dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    MapBinaryPeriodic<kPrefetchLightLoops>(static_cast<const T*>(x), static_cast<const T*>(y),
                                           period, static_cast<T*>(out), begin, end,
                                           AxpbyFn{a, b});
  });
}

void CastKernel(DType in_dtype, DType out_dtype, const void* x, void* out, size_t n) {
  VisitCpuType(in_dtype, [&](auto in_tag) HWY_ATTR {
    VisitCpuType(out_dtype, [&](auto out_tag) HWY_ATTR {
      using TIn = typename decltype(in_tag)::type;
      using TOut = typename decltype(out_tag)::type;
      MapConvert(static_cast<const TIn*>(x), static_cast<TOut*>(out), n);
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cstring>

#include "src/cpu/parallel.h"

namespace hetkern {
namespace cpu {

// Below this many elements per thread, waking threads costs more than it
// saves (2 threads, AVX3: 2^15 float32 scale/add take 0.8x the time of one
// thread with chunks of 2^14; 2^14 elements gain nothing).
constexpr int64_t kElementwiseMinChunk = 1 << 14;
constexpr int64_t kElementwiseAlign = 64;
// A broadcast y shorter than this is first repeated to fill kReplicatedBytes,
// so that the inner loops run over many vectors rather than a few lanes.
constexpr size_t kShortPeriodBytes = 512;
constexpr size_t kReplicatedBytes = 4096;

HWY_EXPORT(ScaleKernel);
HWY_EXPORT(BinaryKernel);
HWY_EXPORT(BinaryScalarKernel);
HWY_EXPORT(AxpbyKernel);
HWY_EXPORT(CastKernel);

namespace {

// Runs kernel(x, out, n) on contiguous chunks of an n-element map, on threads
// when n is large; x and out advance by their own element sizes.
template <class Kernel>
void ForEachChunk(int64_t n, const void* x, size_t x_elem, void* out, size_t out_elem,
                  const Kernel& kernel) {
  ParallelFor(n, kElementwiseMinChunk, kElementwiseAlign, [&](int64_t begin, int64_t end) {
    kernel(static_cast<const char*>(x) + begin * x_elem, static_cast<char*>(out) + begin * out_elem,
           static_cast<size_t>(end - begin));
  });
}

// Runs kernel(y, period, begin, end) over the elements of a binary map with a
// periodic y, on threads when large. Chunks start anywhere in a period; the
// kernel picks up y at the right phase, so results do not depend on threads.
template <class Kernel>
void ForEachPeriodicChunk(const BinaryArgs& args, const Kernel& kernel) {
  if (args.n == 0) return;
  const size_t elem = DTypeSizeOf(args.dtype);
  const void* y = args.y;
  size_t period = static_cast<size_t>(args.y_period);
  alignas(64) char replicated[kReplicatedBytes];
  if (args.y_period < args.n && period * elem < kShortPeriodBytes) {
    const size_t copies = kReplicatedBytes / (period * elem);
    for (size_t c = 0; c < copies; ++c) {
      std::memcpy(replicated + c * period * elem, args.y, period * elem);
    }
    y = replicated;
    period *= copies;
  }
  ParallelFor(args.n, kElementwiseMinChunk, kElementwiseAlign, [&](int64_t begin, int64_t end) {
    kernel(y, period, static_cast<size_t>(begin), static_cast<size_t>(end));
  });
}

}  // namespace

void Scale(const UnaryArgs& args, double factor) {
  const size_t elem = DTypeSizeOf(args.dtype);
  ForEachChunk(args.n, args.x, elem, args.out, elem, [&](const void* x, void* out, size_t n) {
    HWY_DYNAMIC_DISPATCH(ScaleKernel)(args.dtype, x, out, n, factor);
  });
}

void Binary(const BinaryArgs& args, BinaryOp op) {
  ForEachPeriodicChunk(args, [&](const void* y, size_t period, size_t begin, size_t end) {
    HWY_DYNAMIC_DISPATCH(BinaryKernel)(args.dtype, op, args.x, y, period, args.out, begin, end);
  });
}

void BinaryScalar(const UnaryArgs& args, BinaryOp op, double y) {
  const size_t elem = DTypeSizeOf(args.dtype);
  ForEachChunk(args.n, args.x, elem, args.out, elem, [&](const void* x, void* out, size_t n) {
    HWY_DYNAMIC_DISPATCH(BinaryScalarKernel)(args.dtype, op, x, out, n, y);
  });
}

void Axpby(const BinaryArgs& args, double a, double b) {
  ForEachPeriodicChunk(args, [&](const void* y, size_t period, size_t begin, size_t end) {
    HWY_DYNAMIC_DISPATCH(AxpbyKernel)(args.dtype, args.x, y, period, args.out, begin, end, a, b);
  });
}

void Cast(const CastArgs& args) {
  const size_t in_elem = DTypeSizeOf(args.in_dtype);
  if (args.in_dtype == args.out_dtype) {
    // Identity: a copy keeps every bit (NaN payloads included), as x.to(x.dtype) does.
    if (args.n > 0 && args.out != args.x) std::memcpy(args.out, args.x, static_cast<size_t>(args.n) * in_elem);
    return;
  }
  ForEachChunk(args.n, args.x, in_elem, args.out, DTypeSizeOf(args.out_dtype),
               [&](const void* x, void* out, size_t n) {
                 HWY_DYNAMIC_DISPATCH(CastKernel)(args.in_dtype, args.out_dtype, x, out, n);
               });
}

}  // namespace cpu
}  // namespace hetkern
#endif  // HWY_ONCE
