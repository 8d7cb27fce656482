// CUDA kernels of the activations (through MapUnary's streaming kernel) and of
// the gated activations (blocks over rows x chunks of packs; see GatedKernel).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "src/core/kernels.h"
#include "src/cuda/activation.cuh"
#include "src/cuda/elementwise.cuh"

namespace hetkern {
namespace cuda {
namespace {

// out[r, i] = act(x[r, i]) * x[r, d + i]. A block of kGatedThreads threads
// covers kUnroll * kGatedThreads packs of a row (blockIdx.x: which ones);
// blockIdx.y strides over the rows. A thread issues all its loads before the
// first use. kLanes > 1 needs d and the row strides multiples of kLanes and
// 16-byte aligned x and out (then every row's halves are aligned).
constexpr int kGatedThreads = 128;

template <class T, int kLanes, int kUnroll, class Op>
__global__ void __launch_bounds__(kGatedThreads)
    GatedKernel(const T* __restrict__ x, T* __restrict__ out, int64_t rows, int64_t d,
                int64_t x_stride, int64_t out_stride, Op op) {
  using Types = CudaTypes<T>;
  using P = Pack<T, kLanes>;
  WaitForPriorGrids();
  AllowDependentGrids();
  const int64_t packs = d / kLanes;
  const int64_t first = int64_t{blockIdx.x} * kGatedThreads * kUnroll + threadIdx.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const P* gate = reinterpret_cast<const P*>(x + r * x_stride);
    const P* up = reinterpret_cast<const P*>(x + r * x_stride + d);
    P* row_out = reinterpret_cast<P*>(out + r * out_stride);
    P g[kUnroll], u[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t p = first + k * kGatedThreads;
      if (p < packs) {
        g[k] = gate[p];
        u[k] = up[p];
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t p = first + k * kGatedThreads;
      if (p >= packs) break;
      P v;
#pragma unroll
      for (int i = 0; i < kLanes; ++i) {
        // act(g) * u in the compute type, rounded once.
        v.lane[i] = Types::Store(op(LoadLane(g[k], i)) * LoadLane(u[k], i));
      }
      row_out[p] = v;
    }
  }
}

template <class T, int kLanes, int kUnroll, class Op>
void LaunchGated(const GatedArgs& args, const DeviceScope& scope, const Op& op) {
  const int64_t packs = args.d / kLanes;
  const int64_t chunks = (packs + int64_t{kGatedThreads} * kUnroll - 1) / (int64_t{kGatedThreads} * kUnroll);
  const dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(std::min<int64_t>(args.rows, 65535)));
  LaunchDependent(scope, GatedKernel<T, kLanes, kUnroll, Op>, grid, dim3(kGatedThreads),
                  static_cast<const T*>(args.x), static_cast<T*>(args.out), args.rows, args.d,
                  args.x_stride, args.out_stride, op);
}

// bfloat16 erf-GELU of large calls, from a table in shared memory. The
// formula (XNormalCdf<true>, ~27 instructions a value with its conversions)
// kept MapUnary's kernel bound by issue on an H200, whose 4.8 TB/s leave
// ~30 (64M values: 0.83 of a copy of the same bytes, issue slots 87 % busy;
// benchmarks/results/h200-2026-12-04-stop55). A bfloat16 input has few
// values: between |x| = 2^-9 and 16 there are 13 binades of 128 a sign.
// Each block fills a table of those with the formula's own results (the
// ActivationOp that MapUnary runs, so the same bits), then looks values up
// with ~12 integer instructions. Below the table a normal x (exponent field
// >= 2) gives x / 2 exactly: x Phi(x) - x/2 lies within 0.4 x^2 of 0, less
// than half a bfloat16 ulp of x/2 while the exponent field is at most 117.
// The rest (|x| >= 16, zeros and the two lowest binades, inf, NaN) takes the
// formula, lane by lane: rare in activations. Tested with every bit pattern
// at every lane against MapUnary's kernel.
namespace gelu_table {
constexpr uint32_t kFirst = 118u << 7;     // |x| = 2^-9, the table's first magnitude
constexpr uint32_t kSide = 13u * 128u;     // entries a sign: |x| < 2^4
constexpr uint32_t kHalfFirst = 2u << 7;   // x / 2 exact and normal from here

// GELU's bits for x's bits b (b < 2^16): the table's entry (interleaved by
// sign), or x / 2 below the table. `reach` keeps the largest magnitude
// - kHalfFirst seen: at kReach or more some lane was outside both ranges.
constexpr uint32_t kReach = kFirst + kSide - kHalfFirst;
__device__ __forceinline__ uint32_t Lookup(uint32_t b, const uint16_t* table, uint32_t& reach) {
  const uint32_t magnitude = b & 0x7fffu;
  const uint32_t i = magnitude - kFirst;
  const uint32_t entry = table[2 * min(i, kSide - 1) + (b >> 15)];
  reach = max(reach, magnitude - kHalfFirst);
  return i < kSide ? entry : b - 0x80u;
}

// A block takes kPacks 16-byte packs a thread (one chunk of the call; as
// many blocks as the call needs) and loads them before filling its table.
// The two shapes, H200, graph replay, 4 input sets, µs (stop 55, run 2):
// 1024 threads of 2 packs: 8M values 10.2, 16M 19.3, 64M 70.6, 256M 277;
// 512 threads of 4 (3 blocks an SM, 40 registers): 10.9, 19.8, 68.9, 264.
// A resident grid looping over the call was slower at 64M and more (78.3,
// 289: level with the formula at 64M).
template <int kThreadsArg, int kBlocksPerSmArg, int kPacksArg>
struct Shape {
  static constexpr int kThreads = kThreadsArg, kBlocksPerSm = kBlocksPerSmArg, kPacks = kPacksArg;
};
using MidCall = Shape<1024, 2, 2>;
using LargeCall = Shape<512, 3, 4>;
// Calls of at least this many 16-byte packs a resident thread of MidCall's
// take the table (~4.3M values on 132 SMs; at 4M the two were level), and
// from kLargeCallPacks (~35M values) LargeCall's shape.
constexpr int64_t kMinPacks = 2, kLargeCallPacks = 16;
}  // namespace gelu_table

template <class Shape, class Op>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kBlocksPerSm)
    GeluBf16TableKernel(const __nv_bfloat16* x, __nv_bfloat16* out, int64_t n, int64_t head, Op op) {
  namespace gt = gelu_table;
  using P = Pack<__nv_bfloat16, 8>;
  using Types = CudaTypes<__nv_bfloat16>;
  __shared__ alignas(4) uint16_t table[2 * gt::kSide];
  const auto gelu = [&](__nv_bfloat16 v) {  // one element: a head, a tail, a slow lane
    uint32_t reach = 0;
    const uint32_t r = gt::Lookup(__bfloat16_as_ushort(v), table, reach);
    return reach >= gt::kReach ? Types::Store(op(Types::Load(v)))
                               : __ushort_as_bfloat16(static_cast<unsigned short>(r));
  };
  WaitForPriorGrids();
  AllowDependentGrids();
  const int64_t packs = (n - head) / 8;
  const auto* x_packs = reinterpret_cast<const P*>(x + head);
  auto* out_packs = reinterpret_cast<P*>(out + head);
  const int64_t first = int64_t{blockIdx.x} * Shape::kThreads * Shape::kPacks + threadIdx.x;
  P v[Shape::kPacks];
#pragma unroll
  for (int j = 0; j < Shape::kPacks; ++j) {  // in flight while the table fills
    const int64_t p = first + j * Shape::kThreads;
    if (p < packs) v[j] = x_packs[p];
  }
  // x and -x side by side, in one word: their formulas share |x|'s terms.
  for (uint32_t i = threadIdx.x; i < gt::kSide; i += Shape::kThreads) {
    const float positive = __uint_as_float((gt::kFirst + i) << 16);
    const uint32_t pair = uint32_t{__bfloat16_as_ushort(Types::Store(op(positive)))} |
                          uint32_t{__bfloat16_as_ushort(Types::Store(op(-positive)))} << 16;
    memcpy(&table[2 * i], &pair, sizeof pair);
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < Shape::kPacks; ++j) {
    const int64_t p = first + j * Shape::kThreads;
    if (p >= packs) break;
    uint32_t words[4];
    memcpy(words, &v[j], sizeof words);
    uint32_t reach = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t lo = gt::Lookup(words[k] & 0xffffu, table, reach);
      const uint32_t hi = gt::Lookup(words[k] >> 16, table, reach);
      words[k] = __byte_perm(lo, hi, 0x5410);
    }
    P r;
    memcpy(&r, words, sizeof r);
    if (reach >= gt::kReach) {
#pragma unroll
      for (int k = 0; k < 8; ++k) r.lane[k] = gelu(v[j].lane[k]);
    }
    out_packs[p] = r;
  }
  // The head (< 8 elements) and the tail (< 8) go to the first block's threads.
  if (blockIdx.x == 0) {
    const int64_t tail = head + packs * 8;
    if (threadIdx.x < head) out[threadIdx.x] = gelu(x[threadIdx.x]);
    if (tail + threadIdx.x < n) out[tail + threadIdx.x] = gelu(x[tail + threadIdx.x]);
  }
}

// bfloat16 erf-GELU through GeluBf16TableKernel where the call is large
// enough and x and out share their phase; false leaves the call to MapUnary.
template <class Op>
bool LaunchGeluBf16Table(const UnaryArgs& args, const Op& op) {
  namespace gt = gelu_table;
  const auto* x = static_cast<const __nv_bfloat16*>(args.x);
  auto* out = static_cast<__nv_bfloat16*>(args.out);
  const int64_t head = std::min(CommonHead<8>(x, out), args.n);
  // Smaller than the threshold of a GPU of one SM: no device scope needed to
  // know (small calls pay for MapUnary's alone).
  constexpr int64_t kOneSmThreads = int64_t{gt::MidCall::kBlocksPerSm} * gt::MidCall::kThreads;
  if (head < 0 || args.n < gt::kMinPacks * kOneSmThreads * 8) return false;
  DeviceScope scope(args.device);
  const int64_t resident_threads = kOneSmThreads * scope.Multiprocessors();
  const int64_t packs = (args.n - head) / 8;
  if (packs < gt::kMinPacks * resident_threads) return false;
  const auto launch = [&](auto shape) {
    using S = decltype(shape);
    const int64_t blocks = (packs + S::kThreads * S::kPacks - 1) / (S::kThreads * S::kPacks);
    if (blocks > INT32_MAX) return false;
    LaunchDependent(scope, GeluBf16TableKernel<S, Op>, dim3(static_cast<unsigned>(blocks)),
                    dim3(S::kThreads), x, out, args.n, head, op);
    CheckLaunch();
    return true;
  };
  return packs < gt::kLargeCallPacks * resident_threads ? launch(gt::MidCall{}) : launch(gt::LargeCall{});
}

}  // namespace

void Activate(const UnaryArgs& args, Activation act) {
  if (act == Activation::kGelu && args.dtype == DType::kBFloat16 &&
      LaunchGeluBf16Table(args, ActivationOp<float, Activation::kGelu, true>{})) {
    return;
  }
  VisitActivation(act, [&](auto kind) {
    MapUnary(args, [](auto storage) {
      using T = typename decltype(storage)::type;
      using C = typename CudaTypes<T>::Compute;
      return ActivationOp<C, decltype(kind)::value, sizeof(T) == 2>{};
    });
  });
}

void GatedActivate(const GatedArgs& args, Activation act) {
  if (args.rows == 0 || args.d == 0) return;
  DeviceScope scope(args.device);
  VisitCudaType(args.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    using C = typename CudaTypes<T>::Compute;
    constexpr int kLanes = 16 / sizeof(T);
    const bool vectorised = args.d % kLanes == 0 && args.x_stride % kLanes == 0 &&
                            args.out_stride % kLanes == 0 &&
                            reinterpret_cast<uintptr_t>(args.x) % 16 == 0 &&
                            reinterpret_cast<uintptr_t>(args.out) % 16 == 0;
    // At decode sizes a call is the latency of one thread's chain of
    // activations (erf, exp: tens of instructions a value), so smaller packs
    // and more threads while the GPU has room for them; then 16-byte packs,
    // one a thread, and for large calls 2 a thread (more bytes in flight,
    // and registers left for erf's chain). H100, bfloat16, graph replay,
    // d = 4096 (µs): 4-byte packs 1.25 / 1.33 at 1 / 32 rows (8-byte 1.24 /
    // 1.36; gelu 1.47 against 2.04 at 1 row); 8-byte 1.51 at 64 rows (4-byte
    // 1.59); 16-byte 1.97 at 128 (8-byte 2.35); 128 x 14336: 3.78 (8-byte
    // 4.66, 4 a thread 5.06); 16384 x 8192 gelu: 301 with 2 a thread, 420
    // with 4. 16-bit erf-GELU (the 16-bit ops with a two-pack form) takes
    // two packs from 16-byte packs on: its chain leaves one pack's loads
    // waiting (H200, 4 input sets, bfloat16 128 x 8192: 3.10 -> 2.57; float32
    // and silu were slower or level with two there). float32 gelu and
    // gelu_tanh take two up to 1024 x SMs packs: 32 x 8192 1.79 -> 1.52 and
    // 1.67 -> 1.52 us, gelu 128 x 4096 2.29 -> 2.12, 64 x 8192 2.29 -> 2.20;
    // 16 x 8192 and 128 x 8192 (past the bound) level
    // (benchmarks/results/h200-2026-11-29-stop49, run 1).
    const int64_t packs = args.rows * (args.d / kLanes);  // of 16 bytes
    const int64_t sms = scope.Multiprocessors();
    VisitActivation(act, [&](auto kind) {
      using Op = ActivationOp<C, decltype(kind)::value, sizeof(T) == 2>;
      const Op op;
      // Ops with a two-pack form take it from 16-byte packs on: 16-bit always,
      // float32 up to 1024 x SMs packs and again past 2048 x SMs (between
      // them one pack was faster: 128 x 8192 4.0 -> 4.7 us with two).
      const bool two_packs = LargeCallPacks<Op>::value == 2 && (sizeof(T) == 2 || packs <= 1024 * sms);
      if (!vectorised) {
        LaunchGated<T, 1, 1>(args, scope, op);
      } else if (packs <= 128 * sms) {  // <= 4 blocks per SM in 4-byte packs
        LaunchGated<T, std::max(1, kLanes / 4), 1>(args, scope, op);
      } else if (packs <= 256 * sms) {
        LaunchGated<T, kLanes / 2, 1>(args, scope, op);
      } else if (packs <= 2048 * sms && !two_packs) {
        LaunchGated<T, kLanes, 1>(args, scope, op);
      } else {
        LaunchGated<T, kLanes, 2>(args, scope, op);
      }
    });
    CheckLaunch();
  });
}

}  // namespace cuda
}  // namespace hetkern
