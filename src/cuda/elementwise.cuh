// Streaming elementwise kernels: 16-byte vector loads and stores on the
// aligned middle of the arrays, scalar accesses on the unaligned head and the
// tail, one grid-stride loop for any size.
#pragma once

#include <algorithm>
#include <cstdint>

#include "src/cuda/common.cuh"

namespace hetkern {
namespace cuda {

template <class T, int kLanes>
struct alignas(sizeof(T) * kLanes) Pack {
  T lane[kLanes];
};

// out[i] = op(x[i]) in the compute type; out may equal x.
template <class T, int kLanes, class Op>
__global__ void MapUnaryKernel(const T* x, T* out, int64_t n, int64_t head, Op op) {
  using Types = CudaTypes<T>;
  const int64_t thread = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const int64_t threads = int64_t{gridDim.x} * blockDim.x;
  if (thread < head) out[thread] = Types::Store(op(Types::Load(x[thread])));
  const int64_t packs = (n - head) / kLanes;
  const auto* xp = reinterpret_cast<const Pack<T, kLanes>*>(x + head);
  auto* op_out = reinterpret_cast<Pack<T, kLanes>*>(out + head);
  for (int64_t p = thread; p < packs; p += threads) {
    Pack<T, kLanes> v = xp[p];
#pragma unroll
    for (int k = 0; k < kLanes; ++k) v.lane[k] = Types::Store(op(Types::Load(v.lane[k])));
    op_out[p] = v;
  }
  for (int64_t i = head + packs * kLanes + thread; i < n; i += threads) {
    out[i] = Types::Store(op(Types::Load(x[i])));
  }
}

// Launches MapUnaryKernel on the caller's stream. `make_op` receives a
// TypeTag of the compute type and returns the functor for it.
template <class MakeOp>
void MapUnary(const UnaryArgs& args, MakeOp&& make_op) {
  if (args.n == 0) return;
  DeviceScope scope(args.device);
  VisitCudaType(args.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename CudaTypes<T>::Compute;
    constexpr int kLanes = 16 / sizeof(T);
    const auto* x = static_cast<const T*>(args.x);
    auto* out = static_cast<T*>(args.out);
    // Vectorise only when x and out share their offset within 16 bytes.
    const auto x_addr = reinterpret_cast<uintptr_t>(x);
    const bool same_phase = (x_addr % 16) == (reinterpret_cast<uintptr_t>(out) % 16);
    const int64_t head =
        same_phase ? std::min<int64_t>(args.n, ((16 - x_addr % 16) % 16) / sizeof(T)) : args.n;
    constexpr int kThreads = 256;
    const int64_t work = same_phase ? head + (args.n - head) / kLanes : args.n;
    const auto op = make_op(TypeTag<C>{});
    if (same_phase) {
      MapUnaryKernel<T, kLanes><<<scope.StreamingBlocks(work, kThreads), kThreads, 0,
                                  scope.stream()>>>(x, out, args.n, head, op);
    } else {
      // Misaligned relative to each other: 1-lane packs.
      MapUnaryKernel<T, 1><<<scope.StreamingBlocks(work, kThreads), kThreads, 0, scope.stream()>>>(
          x, out, args.n, 0, op);
    }
    CheckLaunch();
  });
}

}  // namespace cuda
}  // namespace hetkern
