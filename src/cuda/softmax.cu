// CUDA kernels of softmax and log_softmax over contiguous rows.
//
// Rows of up to kWarpMaxCols elements: a group of kWidth <= 32 lanes per row
// holds the row in registers (one global read, one write). Longer rows: one
// block per row, an online (max, sum) pass over the row, a block reduction,
// then a read+write pass (the re-read of a row just read mostly hits L2).
// 16-byte packs wherever x and out allow, scalar elements otherwise.
//
// Sums of exp(x - max) are kept as ones + rest, as on the CPU (softmax.h):
// log_softmax at a dominating max is -log1p(rest), which log of a rounded
// 1 + rest loses. Long rows sum in double: a thread's chain of up to ~1000
// float adds of small terms into a large partial loses them systematically
// (11.5 eps low on a 2^20-element randn row, more than the bound allows).
#include <algorithm>
#include <cstdint>

#include "src/core/kernels.h"
#include "src/cuda/common.cuh"
#include "src/cuda/elementwise.cuh"  // Pack

namespace hetkern {
namespace cuda {
namespace {

constexpr int kWarpMaxCols = 1024;  // 32 values per lane at most
constexpr int kWarpKernelThreads = 128;
constexpr int kMaxBlockThreads = 1024;

// Full-precision exp/log1p (expf: 2 ulp, exp: 1 ulp, log1pf/log1p: 1 ulp);
// the fast __expf would cost up to ~100 ulp for arguments near -87.
__device__ __forceinline__ float Exp(float v) { return expf(v); }
__device__ __forceinline__ double Exp(double v) { return exp(v); }
__device__ __forceinline__ float Log1p(float v) { return log1pf(v); }
__device__ __forceinline__ double Log1p(double v) { return log1p(v); }

template <class C>
__device__ __forceinline__ C NegInf() {
  return -static_cast<C>(INFINITY);
}

// exp(v - max), with -inf entries giving 0 also when max is -inf (where
// v - max is NaN). NaN entries, and +inf ones (inf - inf), give NaN, which
// poisons the row's sum as in torch.
template <class C>
__device__ __forceinline__ C ExpShifted(C v, C max) {
  return v == NegInf<C>() ? C(0) : Exp(v - max);
}

// Sum of exp(v - max) over entries v, accumulated in A: `ones` counts the
// entries equal to the max (exp(0) = 1 exactly), `rest` sums the others.
template <class A>
struct ExpSum {
  A ones;  // aggregate, no initializers: MaxSum lives in __shared__ memory
  A rest;

  template <class C>
  __device__ __forceinline__ void Add(C v, C max) {
    // v - max is NaN, not 0, for v == max == +-inf: such terms stay in rest.
    if (v - max == C(0)) {
      ones += A(1);
    } else {
      rest += static_cast<A>(ExpShifted(v, max));
    }
  }

  // The same sum relative to a max `to` >= `from`, the max it was taken
  // with: exactly itself when equal (also for equal infinities).
  template <class C>
  __device__ __forceinline__ ExpSum Rebased(C from, C to) const {
    if (from == to) return *this;
    return {A(0), (ones + rest) * Exp(static_cast<A>(from) - static_cast<A>(to))};
  }

  __device__ __forceinline__ ExpSum operator+(const ExpSum& o) const {
    return {ones + o.ones, rest + o.rest};
  }

  // What y needs: the sum for softmax, log(sum) = log1p((ones - 1) + rest)
  // for log_softmax; a row of -inf only (ones = rest = 0) gives 0 and -inf,
  // which make every y NaN as in torch.
  template <class C>
  __device__ __forceinline__ C Scale(bool log) const {
    return static_cast<C>(log ? Log1p((ones - A(1)) + rest) : ones + rest);
  }
};

// The row's max (NaN ignored: fmax) and sum of exp(x - max) (NaN if any
// entry is NaN or +inf), in double whatever C.
template <class C>
struct MaxSum {
  C max;
  ExpSum<double> sum;

  __device__ static MaxSum Empty() { return {NegInf<C>(), {}}; }

  // Adds values online: one rebase of the sum per call at most.
  template <int K>
  __device__ __forceinline__ void Add(const C (&v)[K]) {
    C m = max;
#pragma unroll
    for (int k = 0; k < K; ++k) m = fmax(m, v[k]);
    if (m != max) {
      sum = sum.Rebased(max, m);
      max = m;
    }
#pragma unroll
    for (int k = 0; k < K; ++k) sum.Add(v[k], m);
  }

  __device__ __forceinline__ void Merge(const MaxSum& o) {
    const C m = fmax(max, o.max);
    sum = sum.Rebased(max, m) + o.sum.Rebased(o.max, m);
    max = m;
  }
};

// y from x given the row's max and sum (or log of the sum for log_softmax).
template <class C>
__device__ __forceinline__ C SoftmaxValue(C v, C max, C sum_or_log_sum, bool log) {
  return log ? (v - max) - sum_or_log_sum : ExpShifted(v, max) / sum_or_log_sum;
}

// ---- Short rows: kWidth lanes per row, row in registers ---------------------

template <class C, int kWidth>
__device__ __forceinline__ C GroupMax(C v) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) {
    v = fmax(v, __shfl_xor_sync(0xffffffffu, v, offset, kWidth));
  }
  return v;
}

template <class C, int kWidth>
__device__ __forceinline__ C GroupSum(C v) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset, kWidth);
  }
  return v;
}

// Row r is held by lanes [g*kWidth, (g+1)*kWidth) of a warp, lane l owning
// packs l, l + kWidth, ... (coalesced). cols <= kWidth * kIters * kVec and,
// for kVec > 1, x and out 16-byte aligned with cols % kVec == 0.
template <class T, int kVec, int kWidth, int kIters>
__global__ void __launch_bounds__(kWarpKernelThreads)
    WarpRowsKernel(const T* x, T* out, int64_t rows, int cols, bool log) {
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  using P = Pack<T, kVec>;
  constexpr int kRowsPerWarp = 32 / kWidth;
  const int lane = threadIdx.x % kWidth;
  const int64_t warp = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = int64_t{gridDim.x} * blockDim.x / 32;
  const int group = (threadIdx.x % 32) / kWidth;
  const int packs = cols / kVec;
  // The loop condition is uniform across the warp, so every lane takes part
  // in the shuffles; groups past the last row compute on -inf and store nothing.
  for (int64_t first = warp * kRowsPerWarp; first < rows; first += warps * kRowsPerWarp) {
    const int64_t row = first + group;
    const bool valid = row < rows;
    C v[kIters][kVec];
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int p = i * kWidth + lane;
      if (valid && p < packs) {
        const P pack = reinterpret_cast<const P*>(x + row * cols)[p];
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[i][k] = Types::Load(pack.lane[k]);
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[i][k] = NegInf<C>();
      }
    }
    C max = NegInf<C>();
#pragma unroll
    for (int i = 0; i < kIters; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) max = fmax(max, v[i][k]);
    max = GroupMax<C, kWidth>(max);
    // At most 32 terms per lane and 5 shuffle levels: summed in C.
    ExpSum<C> sum{};
#pragma unroll
    for (int i = 0; i < kIters; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum.Add(v[i][k], max);
    sum.ones = GroupSum<C, kWidth>(sum.ones);
    sum.rest = GroupSum<C, kWidth>(sum.rest);
    const C scale = sum.template Scale<C>(log);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const int p = i * kWidth + lane;
      if (valid && p < packs) {
        P pack;
#pragma unroll
        for (int k = 0; k < kVec; ++k) pack.lane[k] = Types::Store(SoftmaxValue(v[i][k], max, scale, log));
        reinterpret_cast<P*>(out + row * cols)[p] = pack;
      }
    }
  }
}

template <class T, int kVec, int kWidth, int kIters>
void LaunchWarpRows(const DeviceScope& scope, const T* x, T* out, int64_t rows, int cols,
                    bool log) {
  const int64_t warps = (rows + 32 / kWidth - 1) / (32 / kWidth);
  const int blocks = scope.StreamingBlocks(warps * 32, kWarpKernelThreads);
  WarpRowsKernel<T, kVec, kWidth, kIters>
      <<<blocks, kWarpKernelThreads, 0, scope.stream()>>>(x, out, rows, cols, log);
}

// The smallest (kWidth, kIters) holding `packs`: widths 1..32 with one pack
// per lane, then 32 lanes with 2, 4, ... packs each.
template <class T, int kVec, int kWidth = 1, int kIters = 1>
void LaunchWarpRowsFitting(const DeviceScope& scope, const T* x, T* out, int64_t rows,
                           int cols, bool log) {
  constexpr int kMaxIters = kWarpMaxCols / 32 / kVec;
  if constexpr (kWidth == 32 && kIters == kMaxIters) {
    LaunchWarpRows<T, kVec, kWidth, kIters>(scope, x, out, rows, cols, log);
  } else {
    if (cols / kVec <= kWidth * kIters) {
      LaunchWarpRows<T, kVec, kWidth, kIters>(scope, x, out, rows, cols, log);
    } else if constexpr (kWidth < 32) {
      LaunchWarpRowsFitting<T, kVec, kWidth * 2, 1>(scope, x, out, rows, cols, log);
    } else {
      LaunchWarpRowsFitting<T, kVec, 32, kIters * 2>(scope, x, out, rows, cols, log);
    }
  }
}

// ---- Long rows: one block per row, online (max, sum) then write -------------

// Calls fn on the row's elements owned by this thread: scalar ones (head up
// to 16-byte alignment, tail) as 1-element arrays, the middle as kVec packs.
// The same elements go to the same thread in both passes.
template <class T, int kVec, class ScalarFn, class PackFn>
__device__ __forceinline__ void ForEachOwned(int64_t cols, int64_t head, ScalarFn&& scalar_fn,
                                             PackFn&& pack_fn) {
  const int64_t packs = (cols - head) / kVec;
  for (int64_t i = threadIdx.x; i < head; i += blockDim.x) scalar_fn(i);
  for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) pack_fn(head + p * kVec);
  for (int64_t i = head + packs * kVec + threadIdx.x; i < cols; i += blockDim.x) scalar_fn(i);
}

template <class C>
__device__ __forceinline__ MaxSum<C> ShflXor(const MaxSum<C>& v, int offset) {
  MaxSum<C> r;
  r.max = __shfl_xor_sync(0xffffffffu, v.max, offset);
  r.sum.ones = __shfl_xor_sync(0xffffffffu, v.sum.ones, offset);
  r.sum.rest = __shfl_xor_sync(0xffffffffu, v.sum.rest, offset);
  return r;
}

template <class C>
__device__ __forceinline__ MaxSum<C> BlockMerge(MaxSum<C> acc, MaxSum<C>* shared) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    acc.Merge(ShflXor(acc, offset));
  }
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (threadIdx.x % 32 == 0) shared[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = threadIdx.x < warps ? shared[threadIdx.x] : MaxSum<C>::Empty();
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      acc.Merge(ShflXor(acc, offset));
    }
    if (threadIdx.x == 0) shared[32] = acc;
  }
  __syncthreads();
  return shared[32];
}

// kVec > 1 requires x and out to share their offset within 16 bytes, so one
// head length aligns both.
template <class T, int kVec>
__global__ void __launch_bounds__(kMaxBlockThreads)
    BlockRowsKernel(const T* x, T* out, int64_t rows, int64_t cols, bool log) {
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  using P = Pack<T, kVec>;
  __shared__ MaxSum<C> shared[33];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    T* outr = out + row * cols;
    const auto addr = reinterpret_cast<uintptr_t>(xr);
    const int64_t head =
        kVec == 1 ? 0 : std::min<int64_t>(cols, ((16 - addr % 16) % 16) / sizeof(T));
    MaxSum<C> acc = MaxSum<C>::Empty();
    ForEachOwned<T, kVec>(
        cols, head,
        [&](int64_t i) {
          const C v[1] = {Types::Load(xr[i])};
          acc.Add(v);
        },
        [&](int64_t i) {
          const P pack = *reinterpret_cast<const P*>(xr + i);
          C v[kVec];
#pragma unroll
          for (int k = 0; k < kVec; ++k) v[k] = Types::Load(pack.lane[k]);
          acc.Add(v);
        });
    const MaxSum<C> total = BlockMerge(acc, shared);
    const C scale = total.sum.template Scale<C>(log);
    ForEachOwned<T, kVec>(
        cols, head,
        [&](int64_t i) { outr[i] = Types::Store(SoftmaxValue(Types::Load(xr[i]), total.max, scale, log)); },
        [&](int64_t i) {
          P pack = *reinterpret_cast<const P*>(xr + i);
#pragma unroll
          for (int k = 0; k < kVec; ++k) {
            pack.lane[k] = Types::Store(SoftmaxValue(Types::Load(pack.lane[k]), total.max, scale, log));
          }
          *reinterpret_cast<P*>(outr + i) = pack;
        });
  }
}

int BlockThreads(int64_t packs) {
  int threads = 128;
  while (threads < kMaxBlockThreads && threads * 4 < packs) threads *= 2;
  return threads;
}

}  // namespace

void Softmax(const SoftmaxArgs& a) {
  DeviceScope scope(a.device);
  VisitCudaType(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    const auto* x = static_cast<const T*>(a.x);
    auto* out = static_cast<T*>(a.out);
    const auto x_addr = reinterpret_cast<uintptr_t>(x), out_addr = reinterpret_cast<uintptr_t>(out);
    if (a.cols <= kWarpMaxCols) {
      const int cols = static_cast<int>(a.cols);
      if (x_addr % 16 == 0 && out_addr % 16 == 0 && cols % kVec == 0) {
        LaunchWarpRowsFitting<T, kVec>(scope, x, out, a.rows, cols, a.log);
      } else {
        LaunchWarpRowsFitting<T, 1>(scope, x, out, a.rows, cols, a.log);
      }
    } else {
      const int blocks = scope.StreamingBlocks(a.rows, 1);  // one row per block, SM-bounded
      if (x_addr % 16 == out_addr % 16) {
        BlockRowsKernel<T, kVec><<<blocks, BlockThreads(a.cols / kVec), 0, scope.stream()>>>(
            x, out, a.rows, a.cols, a.log);
      } else {
        BlockRowsKernel<T, 1><<<blocks, BlockThreads(a.cols), 0, scope.stream()>>>(
            x, out, a.rows, a.cols, a.log);
      }
    }
    CheckLaunch();
  });
}

}  // namespace cuda
}  // namespace hetkern
