// Streaming elementwise kernels: 16-byte vector loads and stores on the
// aligned middle of the arrays, scalar accesses on the unaligned head and the
// tail, one grid-stride loop for any size. Launched as programmatic dependent
// launches (common.cuh): under a CUDA graph a call's blocks start while the
// previous kernel drains (H100, bfloat16 exp of 1K values, graph replay:
// 1.35 -> 0.93 us a call).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "src/cuda/common.cuh"

namespace hetkern {
namespace cuda {

template <class T, int kLanes>
struct alignas(sizeof(T) * kLanes) Pack {
  T lane[kLanes];
};

// Round-to-nearest arithmetic that nvcc may not contract into an FMA (it
// contracts a * b + c by default): where torch's one rounding per operation
// is the contract (the elementwise ops, rope's rotation).
__device__ __forceinline__ float AddRn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double AddRn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float SubRn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double SubRn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float MulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double MulRn(double a, double b) { return __dmul_rn(a, b); }
// IEEE division (never a reciprocal multiply, whatever the flags).
__device__ __forceinline__ float DivRn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double DivRn(double a, double b) { return __ddiv_rn(a, b); }

// Lane k of a pack in its compute type. bfloat16 is the high half of a
// float's bits, so a lane of a bfloat16 pair converts as one shift (the low
// lane) or one mask (the high lane) of the pair's 32-bit word; read as a
// 16-bit lane, ptxas moved a high lane down (PRMT) and shifted it back up,
// 1.5 instructions a value where 1 does. That mattered in the issue-bound
// kernels (H100, bfloat16, graph replay: layernorm_quant 16384x4096 81.8 ->
// 78.8 us, 4096x16384 88.8 -> 81.5, with 32-bit slot indices in norm.cu;
// benchmarks/results/h100-2026-11-27-stop37, run 2).
template <class T, int kLanes>
__device__ __forceinline__ typename CudaTypes<T>::Compute LoadLane(const Pack<T, kLanes>& p,
                                                                   int k) {
  if constexpr (std::is_same_v<T, __nv_bfloat16> && kLanes % 2 == 0) {
    uint32_t pair;
    memcpy(&pair, &p.lane[k & ~1], sizeof pair);
    return __uint_as_float(k % 2 == 0 ? pair << 16 : pair & 0xffff0000u);
  } else {
    return CudaTypes<T>::Load(p.lane[k]);
  }
}

// v = *src where `load` holds; v keeps its value otherwise. One predicated
// load into v's registers: `v = load ? *src : fill` instead lets the
// compiler merge the lanes (PRMT) right after each load, and under a
// register cap it then waits for a load before issuing the next, one memory
// latency per pack instead of one per row (Nsight Compute's stall samples,
// softmax bfloat16 1024x16384: the 4th of 4 loads issued after the 1st
// returned). `volatile` keeps the loads in program order, ahead of their uses.
template <class T, int kLanes>
__device__ __forceinline__ void LoadIf(bool load, const Pack<T, kLanes>* src, Pack<T, kLanes>& v) {
  // The packs of 16-bit rows: 8 lanes (16 bytes) or 1 (2 bytes).
  static_assert(sizeof(v) == 16 || sizeof(v) == 2);
  if constexpr (sizeof(v) == 16) {
    auto* w = reinterpret_cast<uint32_t*>(&v);
    asm volatile(
        "{.reg .pred p; setp.ne.b32 p, %5, 0; @p ld.global.v4.u32 {%0, %1, %2, %3}, [%4];}"
        : "+r"(w[0]), "+r"(w[1]), "+r"(w[2]), "+r"(w[3])
        : "l"(src), "r"(int{load}));
  } else {
    auto* w = reinterpret_cast<uint16_t*>(&v);
    asm volatile("{.reg .pred p; setp.ne.b32 p, %2, 0; @p ld.global.u16 %0, [%1];}"
                 : "+h"(w[0])
                 : "l"(src), "r"(int{load}));
  }
}

constexpr int kStreamingThreads = 256;

// Blocks of kStreamingThreads for one of `work` items (packs or elements)
// per thread, as torch's elementwise kernels: on large arrays faster than a
// grid-stride loop over at most 16 blocks per SM (H100, float32 scale of 2^28
// values: 709 against 759 us, 3.03 against 2.83 TB/s; no unrolling of that
// loop closed the gap). The kernels' loops still cover any size.
inline int OneItemPerThreadBlocks(int64_t work) {
  const int64_t blocks = (work + kStreamingThreads - 1) / kStreamingThreads;
  return static_cast<int>(std::clamp<int64_t>(blocks, 1, INT32_MAX));
}

// A streaming kernel keeps one 16-byte pack a thread in flight, so the bytes
// in flight per SM are its resident threads: all 2048 of an H100's only at
// 32 registers or fewer (H100, 2^26 values: bfloat16 silu took 35 registers,
// so 1536 threads, and 0.91 of copy; at 32, 0.99 in the same loop). Ops whose
// code fits that bound without spilling declare kFitsStreamingBound (the
// 16-bit activations); others (IEEE division, float64 libdevice functions)
// would spill under it and keep the compiler's choice.
template <class Op, class = void>
struct FitsStreamingBound : std::false_type {};
template <class Op>
struct FitsStreamingBound<Op, std::void_t<decltype(Op::kFitsStreamingBound)>>
    : std::bool_constant<Op::kFitsStreamingBound> {};
template <class Op>
constexpr int StreamingBlocksPerSm() {
  return FitsStreamingBound<Op>::value ? 2048 / kStreamingThreads : 1;
}

// Packs a thread of MapUnaryKernel loads before computing any, on calls
// larger than the resident grid (kLargeCallPacks of the op, else 1). Two
// packs put twice the bytes in flight a thread where an op's chain is long
// enough to leave the loads waiting (erf-GELU, 16-bit tanh, float32
// gelu_tanh), within the same 32 registers; smaller calls keep one, as a
// thread's latency then is the call's (H200, bfloat16 gelu 1x4096: 1.13 us
// with one, 1.57 with two).
template <class Op, class = void>
struct LargeCallPacks : std::integral_constant<int, 1> {};
template <class Op>
struct LargeCallPacks<Op, std::void_t<decltype(Op::kLargeCallPacks)>>
    : std::integral_constant<int, Op::kLargeCallPacks> {};

// Elements before the first index i at which both p + i and q + i start a
// kLanes pack of their own type, or -1 when no such i exists (the two are out
// of phase and must be accessed one element at a time).
template <int kLanes, class P, class Q>
int64_t CommonHead(const P* p, const Q* q) {
  const auto head_of = [](auto* ptr) {
    using E = std::remove_cv_t<std::remove_pointer_t<decltype(ptr)>>;
    const auto misalign = reinterpret_cast<uintptr_t>(ptr) % (sizeof(E) * kLanes) / sizeof(E);
    return static_cast<int64_t>((kLanes - misalign) % kLanes);
  };
  const int64_t head = head_of(p);
  return head == head_of(q) ? head : -1;
}

// out[i] = op(x[i]) with x read as TIn's compute type and the result stored
// as TOut (op returns TOut's compute type). out may equal x when TIn == TOut.
// kPacks packs a thread are loaded before any is computed; the block's
// threads take consecutive packs, so each load instruction stays coalesced.
template <class TIn, class TOut, int kLanes, class Op, int kPacks = 1>
__global__ void __launch_bounds__(kStreamingThreads, StreamingBlocksPerSm<Op>())
    MapUnaryKernel(const TIn* x, TOut* out, int64_t n, int64_t head, Op op) {
  WaitForPriorGrids();
  AllowDependentGrids();
  // op on a compute value, stored (packs convert their lanes by LoadLane);
  // f_stored on single elements (the head and the tail).
  const auto f = [&](auto v) { return CudaTypes<TOut>::Store(op(v)); };
  const auto f_stored = [&](TIn v) { return f(CudaTypes<TIn>::Load(v)); };
  const int64_t thread = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const int64_t threads = int64_t{gridDim.x} * blockDim.x;
  if (thread < head) out[thread] = f_stored(x[thread]);
  const int64_t packs = (n - head) / kLanes;
  const auto* x_packs = reinterpret_cast<const Pack<TIn, kLanes>*>(x + head);
  auto* out_packs = reinterpret_cast<Pack<TOut, kLanes>*>(out + head);
  const int64_t block_packs = int64_t{blockDim.x} * kPacks;
  for (int64_t first = blockIdx.x * block_packs + threadIdx.x; first < packs;
       first += gridDim.x * block_packs) {
    Pack<TIn, kLanes> v[kPacks];
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int64_t p = first + j * int64_t{blockDim.x};
      if (p < packs) v[j] = x_packs[p];
    }
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
      const int64_t p = first + j * int64_t{blockDim.x};
      if (p < packs) {
        Pack<TOut, kLanes> r;
#pragma unroll
        for (int k = 0; k < kLanes; ++k) r.lane[k] = f(LoadLane(v[j], k));
        out_packs[p] = r;
      }
    }
  }
  for (int64_t i = head + packs * kLanes + thread; i < n; i += threads) out[i] = f_stored(x[i]);
}

// Launches MapUnaryKernel over n elements on the caller's stream: packs of
// 16 bytes of the wider type when x and out share their phase, else 1 lane.
template <class TIn, class TOut, class Op>
void LaunchMapUnary(DLDevice device, const TIn* x, TOut* out, int64_t n, const Op& op) {
  if (n == 0) return;
  DeviceScope scope(device);
  constexpr int kLanes = 16 / std::max(sizeof(TIn), sizeof(TOut));
  const int64_t head = CommonHead<kLanes>(x, out);
  if (head >= 0) {
    const int64_t clamped = std::min(head, n);
    const int64_t packs = (n - clamped) / kLanes;
    constexpr int kLargePacks = LargeCallPacks<Op>::value;
    // The resident grid (an SM count lookup) only for ops with a large-call form.
    if (kLargePacks > 1 &&
        packs > int64_t{StreamingBlocksPerSm<Op>()} * kStreamingThreads * scope.Multiprocessors()) {
      const int64_t work = clamped + (packs + kLargePacks - 1) / kLargePacks;
      LaunchDependent(scope, MapUnaryKernel<TIn, TOut, kLanes, Op, kLargePacks>,
                      OneItemPerThreadBlocks(work), kStreamingThreads, x, out, n, clamped, op);
    } else {
      LaunchDependent(scope, MapUnaryKernel<TIn, TOut, kLanes, Op>,
                      OneItemPerThreadBlocks(clamped + packs), kStreamingThreads, x, out, n,
                      clamped, op);
    }
  } else {
    LaunchDependent(scope, MapUnaryKernel<TIn, TOut, 1, Op>, OneItemPerThreadBlocks(n),
                    kStreamingThreads, x, out, n, int64_t{0}, op);
  }
  CheckLaunch();
}

// out = op(x) for same-typed x and out. `make_op` receives a TypeTag of the
// storage type and returns the functor on its compute type.
template <class MakeOp>
void MapUnary(const UnaryArgs& args, MakeOp&& make_op) {
  VisitCudaType(args.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    LaunchMapUnary(args.device, static_cast<const T*>(args.x), static_cast<T*>(args.out), args.n,
                   make_op(tag));
  });
}

// out[i] = op(x[i], y[i % period]) in the compute type; period == n when y
// has x's shape. x and out are accessed in packs of kLanes; y too when
// kPackedY (then every pack's y elements are one aligned pack of y), else one
// element at a time. The phase of y in each thread's next pack advances by a
// constant step, so the loop has no division.
template <class T, int kLanes, bool kPackedY, class Op>
__global__ void MapBinaryKernel(const T* x, const T* y, int64_t period, T* out, int64_t n,
                                int64_t head, Op op) {
  WaitForPriorGrids();
  AllowDependentGrids();
  using Types = CudaTypes<T>;
  // op on compute values, stored (packs convert their lanes by LoadLane);
  // f_stored on single elements (the head and the tail).
  const auto f = [&](auto a, auto b) { return Types::Store(op(a, b)); };
  const auto f_stored = [&](T a, T b) { return f(Types::Load(a), Types::Load(b)); };
  const int64_t thread = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const int64_t threads = int64_t{gridDim.x} * blockDim.x;
  if (thread < head) out[thread] = f_stored(x[thread], y[thread % period]);
  const int64_t packs = (n - head) / kLanes;
  const auto* x_packs = reinterpret_cast<const Pack<T, kLanes>*>(x + head);
  auto* out_packs = reinterpret_cast<Pack<T, kLanes>*>(out + head);
  const int64_t step = threads * kLanes % period;
  int64_t phase = thread < packs ? (head + thread * kLanes) % period : 0;
  for (int64_t p = thread; p < packs; p += threads) {
    const Pack<T, kLanes> v = x_packs[p];
    Pack<T, kLanes> w, r;
    if constexpr (kPackedY) {
      w = *reinterpret_cast<const Pack<T, kLanes>*>(y + phase);
    } else {
#pragma unroll
      for (int k = 0; k < kLanes; ++k) {
        int64_t j = phase + k;
        if (j >= period) j %= period;
        w.lane[k] = y[j];
      }
    }
#pragma unroll
    for (int k = 0; k < kLanes; ++k) r.lane[k] = f(LoadLane(v, k), LoadLane(w, k));
    out_packs[p] = r;
    phase += step;
    if (phase >= period) phase -= period;
  }
  for (int64_t i = head + packs * kLanes + thread; i < n; i += threads) {
    out[i] = f_stored(x[i], y[i % period]);
  }
}

// A binary functor with y one element in device memory. Validation refused
// any overlap of out with such a y, so the read-only cache may serve it.
template <class T, class Op>
struct WithDeviceScalarY {
  Op op;
  const T* y;
  __device__ typename CudaTypes<T>::Compute operator()(typename CudaTypes<T>::Compute x) const {
    return op(x, CudaTypes<T>::Load(__ldg(y)));
  }
};

// out = op(x, y) over BinaryArgs (y periodic). `make_op` as for MapUnary; a
// one-element y (period 1, n > 1) is read once per element from the
// read-only cache by a unary kernel instead.
template <class MakeOp>
void MapBinary(const BinaryArgs& args, MakeOp&& make_op) {
  if (args.n == 0) return;
  VisitCudaType(args.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kLanes = 16 / sizeof(T);
    const auto* x = static_cast<const T*>(args.x);
    const auto* y = static_cast<const T*>(args.y);
    auto* out = static_cast<T*>(args.out);
    const auto op = make_op(tag);
    const int64_t n = args.n, period = args.y_period;
    if (period == 1 && n > 1) {
      LaunchMapUnary(args.device, x, out, n, WithDeviceScalarY<T, decltype(op)>{op, y});
      return;
    }
    DeviceScope scope(args.device);
    const auto launch = [&](auto lanes, auto packed_y, int64_t head) {
      constexpr int kL = decltype(lanes)::value;
      const int64_t work = head + (n - head) / kL;
      LaunchDependent(scope, MapBinaryKernel<T, kL, decltype(packed_y)::value, decltype(op)>,
                      OneItemPerThreadBlocks(work), kStreamingThreads, x, y, period, out, n, head, op);
    };
    using Vector = std::integral_constant<int, kLanes>;
    using Scalar = std::integral_constant<int, 1>;
    const int64_t head = CommonHead<kLanes>(x, out);
    // y's packs line up with x's when y shares the phase and either has x's
    // shape or rows of whole packs starting at an aligned x.
    const bool packed_y = head >= 0 && CommonHead<kLanes>(x, y) == head &&
                          (period == n || (head == 0 && period % kLanes == 0));
    if (head < 0) {
      launch(Scalar{}, std::true_type{}, 0);
    } else if (packed_y) {
      launch(Vector{}, std::true_type{}, std::min(head, n));
    } else {
      launch(Vector{}, std::false_type{}, std::min(head, n));
    }
    CheckLaunch();
  });
}

}  // namespace cuda
}  // namespace hetkern
