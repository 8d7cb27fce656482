// Elementwise loops shared by the elementwise CPU kernels: read storage type T,
// apply a functor on compute-type vectors, write T back.

#if defined(HETKERN_CPU_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef HETKERN_CPU_ELEMENTWISE_INL_H_
#undef HETKERN_CPU_ELEMENTWISE_INL_H_
#else
#define HETKERN_CPU_ELEMENTWISE_INL_H_
#endif

#include <stddef.h>

#include <hwy/highway.h>

#include "src/cpu/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = op(d, x[i]) for i in [0, n). `op` is called with a full-width tag
// and then, for the tail, with a 1-lane tag, so one body serves both.
// out may equal x (in place); no other overlap is allowed.
template <class T, class Op>
HWY_INLINE void MapUnary(const T* x, T* out, size_t n, const Op& op) {
  using C = ComputeType<T>;
  const hn::ScalableTag<C> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    StoreAs(op(d, LoadAs(d, x + i)), d, out + i);
  }
  const hn::CappedTag<C, 1> d1;
  for (; i < n; ++i) {
    StoreAs(op(d1, LoadAs(d1, x + i)), d1, out + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#endif  // HETKERN_CPU_ELEMENTWISE_INL_H_
