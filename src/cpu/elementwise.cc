// Highway kernels of the elementwise ops, compiled once per SIMD target and
// dispatched at run time to the best one this CPU supports.
#include <stddef.h>

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

// Calls fn(TypeTag<T>{}) with T the CPU storage type of `dtype`.
template <class Fn>
HWY_INLINE void VisitCpuType(DType dtype, Fn&& fn) {
  VisitDType<float, double, hwy::float16_t, hwy::bfloat16_t>(dtype, fn);
}

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
    MapUnary(static_cast<const T*>(x), static_cast<T*>(out), n, ScaleOp{factor});
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

// Below this many elements per thread, waking threads costs more than it saves.
constexpr int64_t kElementwiseMinChunk = 1 << 15;
constexpr int64_t kElementwiseAlign = 64;

HWY_EXPORT(ScaleKernel);

void Scale(const UnaryArgs& args, double factor) {
  const size_t elem = DTypeSizeOf(args.dtype);
  ParallelFor(args.n, kElementwiseMinChunk, kElementwiseAlign, [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(ScaleKernel)(args.dtype, static_cast<const char*>(args.x) + begin * elem,
                                      static_cast<char*>(args.out) + begin * elem,
                                      static_cast<size_t>(end - begin), factor);
  });
}

}  // namespace cpu
}  // namespace hetkern
#endif  // HWY_ONCE
