// CUDA kernels of the elementwise ops.
#include "src/core/kernels.h"
#include "src/cuda/elementwise.cuh"

namespace hetkern {
namespace cuda {

template <class C>
struct ScaleOp {
  C factor;
  __device__ C operator()(C v) const { return v * factor; }
};

void Scale(const UnaryArgs& args, double factor) {
  MapUnary(args, [&](auto compute) {
    using C = typename decltype(compute)::type;
    // Rounded to the compute type first, as torch does.
    return ScaleOp<C>{static_cast<C>(factor)};
  });
}

}  // namespace cuda
}  // namespace hetkern
