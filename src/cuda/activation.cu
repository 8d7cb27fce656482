// CUDA kernels of the activations (through MapUnary's streaming kernel) and of
// the gated activations (blocks over rows x chunks of packs; see GatedKernel).
#include <algorithm>
#include <cstdint>

#include "src/core/kernels.h"
#include "src/cuda/elementwise.cuh"

namespace hetkern {
namespace cuda {
namespace {

// The accurate libdevice functions (never the __expf-style intrinsics) of
// both compute types. NaN propagates through all of them.
__device__ inline float Exp(float x) { return expf(x); }
__device__ inline double Exp(double x) { return ::exp(x); }
__device__ inline float Tanh(float x) { return tanhf(x); }
__device__ inline double Tanh(double x) { return ::tanh(x); }
// GELU's x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2 the standard normal
// CDF, through normcdf directly: no rounding of x / sqrt 2 and no
// cancellation in 1 + erf for x < 0 (normcdff: max 5 ulp per the CUDA math
// documentation). Below x = -12.94 Phi(x) is subnormal in float32 and 0 below
// -14.1, while x * Phi(x) (|x| times larger) is still representable down to
// -14.4: there a float32 normcdff would lose the result's digits before the
// product (30+ ulp, or 0 where the exact value is not, making 0 * inf = NaN in
// the gated ops). So the float tail is computed in double (Phi and the product
// normal there) and rounded once; x < -12 is rare enough that its cost is nil.
__device__ inline float XNormalCdf(float x) {
  if (x < -12.0f) {
    const double xd = x;
    return static_cast<float>(xd * normcdf(xd));
  }
  return x * normcdff(x);
}
// float64 has no wider type; its bound (docs/activation.md) allows the
// subnormal Phi below x = -37.5.
__device__ inline double XNormalCdf(double x) { return x * normcdf(x); }

// The same for results rounded to a 16-bit type with fewer instructions
// (bfloat16 GELU through normcdff was issue-bound at 0.54 of copy on the
// H100): x/2 erfc(-x/sqrt 2). erfcf (4 ulp) has no cancellation for x < 0;
// rounding -x/sqrt 2 costs a relative x^2/2 eps (4e-6 at x = -12), far below
// half an ulp of float16 or bfloat16. Below -12 the double tail above, out of
// line so that the hot loop stays small (inlined into the 8 unrolled lanes,
// the double normcdf costs throughput even untaken): bfloat16's subnormals
// hold x Phi(x) down to x = -14.4, where float32's Phi and erfcf are 0.
__device__ __noinline__ float XNormalCdfTail(float x) { return XNormalCdf(x); }
__device__ inline float XNormalCdfFor16Bit(float x) {
  if (x < -12.0f) return XNormalCdfTail(x);
  return 0.5f * x * erfcf(x * -0.70710678118654752f);
}

// x * sigmoid(z) = x / (1 + e^-z), accurate for tiny results and without
// overflow: with h = e^(-|z|/2), (x h) h / (1 + h^2) for z < 0.
template <class C>
__device__ C XSigmoid(C x, C z) {
  const C h = Exp(C(-0.5) * fabs(z));
  return (z < C(0) ? (x * h) * h : x) / (C(1) + h * h);
}

// act(x) in compute type C; the same formulas as the CPU kernels
// (src/cpu/activation-inl.h explains them). k16Bit: the result is rounded to
// a 16-bit type, which allows a cheaper erf-GELU.
template <class C, Activation kAct, bool k16Bit = false>
struct ActivationOp {
  __device__ C operator()(C x) const {
    if constexpr (kAct == Activation::kRelu) {
      return x < C(0) ? C(0) : x;  // relu(NaN) = NaN, relu(-0) = -0, as torch
    } else if constexpr (kAct == Activation::kSigmoid) {
      const C e = Exp(-fabs(x));
      return (x < C(0) ? e : C(1)) / (C(1) + e);
    } else if constexpr (kAct == Activation::kSilu) {
      return XSigmoid(x, x);
    } else if constexpr (kAct == Activation::kGelu) {
      if constexpr (k16Bit) {
        return XNormalCdfFor16Bit(x);
      } else {
        return XNormalCdf(x);
      }
    } else if constexpr (kAct == Activation::kGeluTanh) {
      constexpr double k0 = 0.7978845608028654;  // sqrt(2 / pi)
      constexpr double k1 = 0.044715;
      return XSigmoid(x, x * (C(2 * k0 * k1) * (x * x) + C(2 * k0)));
    } else if constexpr (kAct == Activation::kTanh) {
      return Tanh(x);
    } else {
      return Exp(x);
    }
  }
};

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
        v.lane[i] = Types::Store(op(Types::Load(g[k].lane[i])) * Types::Load(u[k].lane[i]));
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
    // with 4.
    const int64_t packs = args.rows * (args.d / kLanes);  // of 16 bytes
    const int64_t sms = scope.Multiprocessors();
    VisitActivation(act, [&](auto kind) {
      const ActivationOp<C, decltype(kind)::value, sizeof(T) == 2> op;
      if (!vectorised) {
        LaunchGated<T, 1, 1>(args, scope, op);
      } else if (packs <= 128 * sms) {  // <= 4 blocks per SM in 4-byte packs
        LaunchGated<T, std::max(1, kLanes / 4), 1>(args, scope, op);
      } else if (packs <= 256 * sms) {
        LaunchGated<T, kLanes / 2, 1>(args, scope, op);
      } else if (packs <= 2048 * sms) {
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
