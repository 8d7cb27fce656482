// CUDA kernels of the activations (through MapUnary's streaming kernel) and of
// the gated activations (blocks over rows x chunks of packs; see GatedKernel).
#include <algorithm>
#include <cstdint>

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

}  // namespace

void Activate(const UnaryArgs& args, Activation act) {
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
