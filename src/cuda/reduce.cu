// CUDA kernels of the reductions (sum, max, dot, norm).
//
// A row is cut into segments of kReduceCudaChunk elements. Rows of up to
// kWarpRowMax elements get one warp each, longer ones one block per segment.
// Each thread accumulates its share in index order (16-byte loads on the
// aligned middle), then the group combines in a fixed shuffle/shared-memory
// tree. A row of one segment is finished right away; otherwise each segment
// leaves a partial in the caller's scratch and a second kernel combines a
// row's partials in a fixed order. The path and the order depend only on the
// shape: results are identical run to run and on any GPU, with no atomics.
// A whole array's max, whose bits do not depend on the order, is split by
// the SM count instead (ReduceGridStrideKernel).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "src/core/kernels.h"
#include "src/cuda/common.cuh"
#include "src/cuda/elementwise.cuh"  // Pack

namespace hetkern {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;
// Rows up to this long are reduced by one warp each (8 rows per block).
constexpr int64_t kWarpRowMax = 1024;

template <class A>
struct SumOp {
  static constexpr bool kBinary = false;
  static constexpr bool kMax = false;
  __device__ static A Identity() { return A(0); }
  __device__ static A Accumulate(A acc, A x, A) { return acc + x; }
  __device__ static A Combine(A a, A b) { return a + b; }
  __device__ static A Finish(A total) { return total; }
};

template <class A>
struct DotOp : SumOp<A> {
  static constexpr bool kBinary = true;
  __device__ static A Accumulate(A acc, A x, A y) { return fma(x, y, acc); }
};

// Accumulated in float64 for every dtype: no overflow or underflow of x*x.
template <class A>
struct NormOp : SumOp<A> {
  __device__ static A Accumulate(A acc, A x, A) { return fma(x, x, acc); }
  __device__ static A Finish(A total) { return sqrt(total); }
};

// Bitwise AND of two floats: for equal operands, +0 when they are +0 and -0.
__device__ inline float AndBits(float a, float b) {
  return __uint_as_float(__float_as_uint(a) & __float_as_uint(b));
}
__device__ inline double AndBits(double a, double b) {
  return __longlong_as_double(__double_as_longlong(a) & __double_as_longlong(b));
}

// IEEE 754-2019 maximum, as on the CPU: NaN wins (like torch.max) and
// +0 > -0, so the result does not depend on the combination order.
template <class A>
struct MaxOp {
  static constexpr bool kBinary = false;
  static constexpr bool kMax = true;
  __device__ static A Identity() { return -INFINITY; }
  __device__ static A Combine(A a, A b) {
    if (a < b || b != b) return b;
    return a == b ? AndBits(a, b) : a;  // a NaN `a` stays
  }
  __device__ static A Accumulate(A acc, A x, A) { return Combine(acc, x); }
  __device__ static A Finish(A total) { return total; }
};

template <class Op, class A>
__device__ A WarpReduce(A v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v = Op::Combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

// A block's combination, second stage: the kThreads / kWarp warp results at
// `parts`, combined by the calling warp (every lane gets the total).
template <class Op, class A>
__device__ A CombineWarpParts(const A* parts) {
  const int lane = threadIdx.x % kWarp;
  return WarpReduce<Op>(lane < kThreads / kWarp ? parts[lane] : Op::Identity());
}

// The block's combination, valid in thread 0. Every thread must call it.
template <class Op, class A>
__device__ A BlockReduce(A v, A* shared) {
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  v = WarpReduce<Op>(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) v = CombineWarpParts<Op>(shared);
  __syncthreads();  // `shared` is free again for the next segment
  return v;
}

// Thread `lane` of `group` threads: its share of n elements at x (and y), in
// index order. kVec > 1: 16-byte packs on the aligned middle (x and y then
// share their alignment), single elements on the head and tail.
template <class T, class A, class Op, int kVec>
__device__ A ThreadAccumulate(const T* x, const T* y, int64_t n, int lane, int group) {
  using Types = CudaTypes<T>;
  const auto load = [](T v) { return static_cast<A>(Types::Load(v)); };
  A acc = Op::Identity();
  int64_t head = 0;
  if (kVec > 1) {
    const auto misalignment = reinterpret_cast<uintptr_t>(x) % 16;
    head = misalignment ? (16 - misalignment) / sizeof(T) : 0;
    head = head < n ? head : n;
  }
  if (lane < head) acc = Op::Accumulate(acc, load(x[lane]), Op::kBinary ? load(y[lane]) : A());
  using P = Pack<T, kVec>;
  const int64_t packs = (n - head) / kVec;
  const P* xp = reinterpret_cast<const P*>(x + head);
  const P* yp = reinterpret_cast<const P*>(Op::kBinary ? y + head : x + head);
  // max of 16-bit floats: packed pairs in their own type (max is exact in any
  // type), one NaN-propagating instruction per two elements instead of a
  // conversion and a compare-select chain per element (bfloat16 max was
  // issue-bound at 0.75 of copy). The pair is combined into acc at the end by
  // Op::Combine, which orders +0 above -0.
  constexpr bool kPairedMax = Op::kMax && sizeof(T) == 2 && kVec > 1;
  using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
  T2 pair_max;
  if constexpr (kPairedMax) pair_max = T2(Types::Store(-INFINITY), Types::Store(-INFINITY));
  const auto accumulate_pack = [&](const P& xv, const P& yv) {
    if constexpr (kPairedMax) {
      const T2* pairs = reinterpret_cast<const T2*>(&xv);
#pragma unroll
      for (int k = 0; k < kVec / 2; ++k) pair_max = __hmax2_nan(pair_max, pairs[k]);
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        acc = Op::Accumulate(acc, load(xv.lane[k]), Op::kBinary ? load(yv.lane[k]) : A());
      }
    }
  };
  // Several packs in flight per thread before they are accumulated.
  constexpr int kUnroll = kVec > 1 ? 4 : 8;
  int64_t p = lane;
  for (; p + (kUnroll - 1) * group < packs; p += kUnroll * group) {
    P xv[kUnroll], yv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      xv[u] = xp[p + u * group];
      if (Op::kBinary) yv[u] = yp[p + u * group];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) accumulate_pack(xv[u], yv[u]);
  }
  for (; p < packs; p += group) {
    const P xv = xp[p];
    accumulate_pack(xv, Op::kBinary ? yp[p] : xv);
  }
  if constexpr (kPairedMax) {
    acc = Op::Combine(acc, load(pair_max.x));
    acc = Op::Combine(acc, load(pair_max.y));
  }
  for (int64_t i = head + packs * kVec + lane; i < n; i += group) {
    acc = Op::Accumulate(acc, load(x[i]), Op::kBinary ? load(y[i]) : A());
  }
  return acc;
}

// Segment s = chunk s % chunks of row s / chunks, reduced by a group of
// kGroup threads (a warp or the whole block); grid-stride over segments.
// With one chunk per row the result goes to out, else to partials[s].
template <class T, class A, class Op, int kGroup, int kVec>
__global__ void __launch_bounds__(kThreads)
    ReduceSegmentsKernel(const T* x, const T* y, T* out, A* partials, int64_t rows, int64_t cols,
                         int64_t chunks) {
  WaitForPriorGrids();
  AllowDependentGrids();
  const int lane = threadIdx.x % kGroup;
  const int64_t segments = rows * chunks;
  // This thread's share of a segment, accumulated in order.
  const auto accumulate = [&](int64_t segment) {
    const int64_t row = segment / chunks, chunk = segment % chunks;
    const int64_t begin = row * cols + chunk * kReduceCudaChunk;
    const int64_t rest = cols - chunk * kReduceCudaChunk;
    const int64_t n = rest < kReduceCudaChunk ? rest : kReduceCudaChunk;
    return ThreadAccumulate<T, A, Op, kVec>(x + begin, Op::kBinary ? y + begin : nullptr, n, lane,
                                            kGroup);
  };
  const auto store = [&](int64_t segment, A total) {
    if (chunks == 1) {
      using C = typename CudaTypes<T>::Compute;
      out[segment] = CudaTypes<T>::Store(static_cast<C>(Op::Finish(total)));
    } else {
      partials[segment] = total;
    }
  };
  if constexpr (kGroup == kWarp) {
    constexpr int kGroupsPerBlock = kThreads / kWarp;
    for (int64_t first = int64_t{blockIdx.x} * kGroupsPerBlock; first < segments;
         first += int64_t{gridDim.x} * kGroupsPerBlock) {
      const int64_t segment = first + threadIdx.x / kWarp;
      if (segment >= segments) continue;  // whole warps: the shuffles stay uniform
      const A total = WarpReduce<Op>(accumulate(segment));
      if (lane == 0) store(segment, total);
    }
  } else {
    // The block's segments blockIdx.x + k * gridDim.x, kBatch at a time: each
    // warp reduces its part of every segment of the batch and leaves it in
    // shared memory, then warp k combines segment k's parts. The tree is
    // BlockReduce's (CombineWarpParts: same bits), but a warp goes on to its
    // next segment's loads without waiting for the block: one barrier pair a
    // batch instead of a segment, which left the SM without loads in flight
    // while a block's warps met. H100, graph replay, whole arrays, against one
    // segment a barrier pair: bfloat16 64M max 50.9 us against 58.0 (torch
    // 55.3), sum 48.9 / 51.6, norm 49.4 / 53.4, 16M max 10.1 / 11.9; float32
    // 64M max 94.9 / 97.5, sum 91.3 / 90.4, dot 178.2 / 176.1
    // (benchmarks/results/h100-2026-11-26-stop28, run 3).
    constexpr int kWarps = kThreads / kWarp;
    constexpr int kBatch = 4;
    static_assert(kBatch <= kWarps, "warp k combines segment k");
    __shared__ A warp_parts[kBatch][kWarps];
    const int warp = threadIdx.x / kWarp, warp_lane = threadIdx.x % kWarp;
    const int64_t stride = gridDim.x;
    for (int64_t first = blockIdx.x; first < segments; first += stride * kBatch) {
#pragma unroll 1  // unrolled, the float32 and float64 kernels spilled
      for (int k = 0; k < kBatch; ++k) {
        const int64_t segment = first + k * stride;
        if (segment >= segments) break;  // uniform over the block
        const A part = WarpReduce<Op>(accumulate(segment));
        if (warp_lane == 0) warp_parts[k][warp] = part;
      }
      __syncthreads();
      const int64_t segment = first + warp * stride;
      if (warp < kBatch && segment < segments) {
        const A total = CombineWarpParts<Op>(warp_parts[warp]);
        if (warp_lane == 0) store(segment, total);
      }
      __syncthreads();  // warp_parts is free again for the next batch
    }
  }
}

// A whole array's max. MaxOp is exact and its combination order-free, so
// any split of the array gives the same bits, on any GPU: each thread
// streams its grid-stride share with no reduction between its loads, and
// each block (kGridStrideBlocksPerSm an SM, all resident) leaves one
// partial. The fixed segments of the sums, whose bits depend on the order,
// cost a block reduction per 8192 values. H100, graph replay, against
// segments 4 a barrier pair: bfloat16 64M 47.1 us against 51.4
// (torch.compile 47.4, torch 55.2), 16M 9.0 / 10.1; float32 64M 92.1 / 95.0
// (benchmarks/results/h100-2026-11-26-stop28, run 6).
constexpr int kGridStrideBlocksPerSm = 8;
template <class T, class A, class Op, int kVec>
__global__ void __launch_bounds__(kThreads, kGridStrideBlocksPerSm)
    ReduceGridStrideKernel(const T* x, A* partials, int64_t n) {
  static_assert(Op::kMax, "only an order-free combination may take any split");
  WaitForPriorGrids();
  AllowDependentGrids();
  __shared__ A shared[kThreads / kWarp];
  const int thread = blockIdx.x * kThreads + threadIdx.x;
  const A total = BlockReduce<Op>(
      ThreadAccumulate<T, A, Op, kVec>(x, nullptr, n, thread, gridDim.x * kThreads), shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// out[row] from the row's `chunks` partials: thread t takes partials t,
// t + kThreads, ... in order, then the block combines; grid-stride over rows.
template <class T, class A, class Op>
__global__ void __launch_bounds__(kThreads)
    CombinePartialsKernel(const A* partials, T* out, int64_t rows, int64_t chunks) {
  WaitForPriorGrids();
  AllowDependentGrids();
  __shared__ A shared[kThreads / kWarp];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    A acc = Op::Identity();
    for (int64_t c = threadIdx.x; c < chunks; c += kThreads) {
      acc = Op::Combine(acc, partials[row * chunks + c]);
    }
    acc = BlockReduce<Op>(acc, shared);
    if (threadIdx.x == 0) {
      using C = typename CudaTypes<T>::Compute;
      out[row] = CudaTypes<T>::Store(static_cast<C>(Op::Finish(acc)));
    }
  }
}

template <class T, class A, class Op, int kGroup, int kVec>
void LaunchSegments(const ReduceArgs& args, const DeviceScope& scope, int64_t chunks) {
  const int blocks = scope.StreamingBlocks(args.rows * chunks * kGroup, kThreads);
  LaunchDependent(scope, ReduceSegmentsKernel<T, A, Op, kGroup, kVec>, blocks, kThreads,
                  static_cast<const T*>(args.x), static_cast<const T*>(args.y),
                  static_cast<T*>(args.out), reinterpret_cast<A*>(args.scratch), args.rows,
                  args.cols, chunks);
  CheckLaunch();
}

template <class T, class A, class Op, int kGroup>
void LaunchSegments(const ReduceArgs& args, const DeviceScope& scope, int64_t chunks) {
  constexpr int kVec = 16 / sizeof(T);
  if constexpr (Op::kBinary) {
    // Byte offsets of x and y rows are equal, so one test covers every row.
    const auto x_addr = reinterpret_cast<uintptr_t>(args.x);
    const auto y_addr = reinterpret_cast<uintptr_t>(args.y);
    if (x_addr % 16 != y_addr % 16) {
      return LaunchSegments<T, A, Op, kGroup, 1>(args, scope, chunks);
    }
  }
  LaunchSegments<T, A, Op, kGroup, kVec>(args, scope, chunks);
}

template <class T, class A, class Op>
void LaunchCombine(const ReduceArgs& args, const DeviceScope& scope, int64_t partials_per_row) {
  LaunchDependent(scope, CombinePartialsKernel<T, A, Op>,
                  scope.StreamingBlocks(args.rows * kThreads, kThreads), kThreads,
                  reinterpret_cast<const A*>(args.scratch), static_cast<T*>(args.out), args.rows,
                  partials_per_row);
  CheckLaunch();
}

template <class T, class A, class Op>
void LaunchReduce(const ReduceArgs& args, const DeviceScope& scope) {
  const int64_t chunks =
      args.cols > kReduceCudaChunk ? (args.cols + kReduceCudaChunk - 1) / kReduceCudaChunk : 1;
  if constexpr (Op::kMax) {
    if (args.rows == 1 && chunks > 1) {  // a whole array: any split, at most `chunks` partials
      const int64_t blocks =
          std::min<int64_t>(int64_t{scope.Multiprocessors()} * kGridStrideBlocksPerSm, chunks);
      LaunchDependent(scope, ReduceGridStrideKernel<T, A, Op, 16 / sizeof(T)>,
                      static_cast<int>(blocks), kThreads, static_cast<const T*>(args.x),
                      reinterpret_cast<A*>(args.scratch), args.cols);
      CheckLaunch();
      return LaunchCombine<T, A, Op>(args, scope, blocks);
    }
  }
  if (args.cols <= kWarpRowMax) {
    LaunchSegments<T, A, Op, kWarp>(args, scope, chunks);
  } else {
    LaunchSegments<T, A, Op, kThreads>(args, scope, chunks);
  }
  if (chunks > 1) LaunchCombine<T, A, Op>(args, scope, chunks);
}

}  // namespace

void Reduce(const ReduceArgs& args, ReduceOp op) {
  if (args.rows == 0) return;
  DeviceScope scope(args.device);
  VisitCudaType(args.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename CudaTypes<T>::Compute;
    switch (op) {
      case ReduceOp::kSum:
        return LaunchReduce<T, C, SumOp<C>>(args, scope);
      case ReduceOp::kMax:
        return LaunchReduce<T, C, MaxOp<C>>(args, scope);
      case ReduceOp::kDot:
        return LaunchReduce<T, C, DotOp<C>>(args, scope);
      case ReduceOp::kNorm:
        return LaunchReduce<T, double, NormOp<double>>(args, scope);
    }
  });
}

}  // namespace cuda
}  // namespace hetkern
