// Highway kernels of the activations and gated activations, compiled once per
// SIMD target and dispatched at run time to the best one this CPU supports.
#include <stddef.h>

#include "src/core/kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/activation.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "src/cpu/activation-inl.h"
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

void ActivateKernel(DType dtype, Activation act, const void* x, void* out, size_t n) {
  VisitCpuType(dtype, [&](auto type) HWY_ATTR {
    using T = typename decltype(type)::type;
    VisitActivation(act, [&](auto kind) HWY_ATTR {
      MapUnary(static_cast<const T*>(x), static_cast<T*>(out), n, ActivationOp<decltype(kind)::value>());
    });
  });
}

// Rows [0, rows) of x (2 * d per row, rows x_stride elements apart) into out
// (d per row, out_stride apart).
void GatedKernel(DType dtype, Activation act, const void* x, void* out, size_t rows, size_t d,
                 size_t x_stride, size_t out_stride) {
  VisitCpuType(dtype, [&](auto type) HWY_ATTR {
    using T = typename decltype(type)::type;
    VisitActivation(act, [&](auto kind) HWY_ATTR {
      const T* in = static_cast<const T*>(x);
      T* result = static_cast<T*>(out);
      for (size_t r = 0; r < rows; ++r) {
        const T* row = in + r * x_stride;
        MapGated(row, row + d, result + r * out_stride, d, ActivationOp<decltype(kind)::value>());
      }
    });
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

// Activations cost tens of flops per element (exp, divisions), so threads pay
// off earlier than for scale; chunks stay cache-line aligned.
constexpr int64_t kActivationMinChunk = 1 << 13;
constexpr int64_t kActivationAlign = 64;

HWY_EXPORT(ActivateKernel);
HWY_EXPORT(GatedKernel);

void Activate(const UnaryArgs& args, Activation act) {
  const size_t elem = DTypeSizeOf(args.dtype);
  ParallelFor(args.n, kActivationMinChunk, kActivationAlign, [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(ActivateKernel)(args.dtype, act,
                                         static_cast<const char*>(args.x) + begin * elem,
                                         static_cast<char*>(args.out) + begin * elem,
                                         static_cast<size_t>(end - begin));
  });
}

void GatedActivate(const GatedArgs& args, Activation act) {
  const size_t elem = DTypeSizeOf(args.dtype);
  // Whole rows per thread; enough rows that each thread gets ~min_chunk outputs.
  const int64_t min_rows = std::max<int64_t>(1, kActivationMinChunk / std::max<int64_t>(args.d, 1));
  ParallelFor(args.rows, min_rows, 1, [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(GatedKernel)(args.dtype, act,
                                      static_cast<const char*>(args.x) + begin * args.x_stride * elem,
                                      static_cast<char*>(args.out) + begin * args.out_stride * elem,
                                      static_cast<size_t>(end - begin), static_cast<size_t>(args.d),
                                      static_cast<size_t>(args.x_stride),
                                      static_cast<size_t>(args.out_stride));
  });
}

}  // namespace cpu
}  // namespace hetkern
#endif  // HWY_ONCE
