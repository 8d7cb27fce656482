// CUDA kernels of the elementwise ops. Arithmetic goes through the _rn
// intrinsics (AddRn and the rest, elementwise.cuh): nvcc contracts a*b + c
// into an FMA by default, and torch's results (one rounding per operation)
// are the contract.
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
  MapUnary(args, [&](auto tag) {
    using C = typename CudaTypes<typename decltype(tag)::type>::Compute;
    // Rounded to the compute type first, as torch does.
    return ScaleOp<C>{static_cast<C>(factor)};
  });
}

template <BinaryOp kOp>
struct BinaryFn {
  template <class C>
  __device__ C operator()(C x, C y) const {
    if constexpr (kOp == BinaryOp::kAdd) return AddRn(x, y);
    if constexpr (kOp == BinaryOp::kSub) return SubRn(x, y);
    if constexpr (kOp == BinaryOp::kMul) return MulRn(x, y);
    if constexpr (kOp == BinaryOp::kDiv) return DivRn(x, y);
  }
};

// A binary functor with y a number already rounded to the compute type C.
template <class C, class Fn>
struct WithScalarY {
  Fn fn;
  C y;
  __device__ C operator()(C x) const { return fn(x, y); }
};

template <class C>
struct AxpbyFn {
  C a, b;
  __device__ C operator()(C x, C y) const { return AddRn(MulRn(a, x), MulRn(b, y)); }
};

void Binary(const BinaryArgs& args, BinaryOp op) {
  VisitBinaryOp<BinaryFn>(op, [&](auto fn) { MapBinary(args, [&](auto) { return fn; }); });
}

void BinaryScalar(const UnaryArgs& args, BinaryOp op, double y) {
  VisitBinaryOp<BinaryFn>(op, [&](auto fn) {
    MapUnary(args, [&](auto tag) {
      using C = typename CudaTypes<typename decltype(tag)::type>::Compute;
      // Rounded to the compute type first, as torch does.
      return WithScalarY<C, decltype(fn)>{fn, static_cast<C>(y)};
    });
  });
}

void Axpby(const BinaryArgs& args, double a, double b) {
  MapBinary(args, [&](auto tag) {
    using C = typename CudaTypes<typename decltype(tag)::type>::Compute;
    return AxpbyFn<C>{static_cast<C>(a), static_cast<C>(b)};
  });
}

// Compute type to compute type; double -> float rounds to nearest even, so
// float64 -> float16/bfloat16 rounds through float32 as torch does.
template <class CIn, class COut>
struct CastFn {
  __device__ COut operator()(CIn v) const { return static_cast<COut>(v); }
};

void Cast(const CastArgs& args) {
  if (args.n == 0) return;
  if (args.in_dtype == args.out_dtype) {
    // Identity: a copy keeps every bit (NaN payloads included), as x.to(x.dtype) does.
    if (args.out == args.x) return;
    DeviceScope scope(args.device);
    HETKERN_CUDA_CHECK(cudaMemcpyAsync(args.out, args.x, args.n * DTypeSizeOf(args.in_dtype),
                                       cudaMemcpyDeviceToDevice, scope.stream()));
    return;
  }
  VisitCudaType(args.in_dtype, [&](auto in_tag) {
    VisitCudaType(args.out_dtype, [&](auto out_tag) {
      using TIn = typename decltype(in_tag)::type;
      using TOut = typename decltype(out_tag)::type;
      using CIn = typename CudaTypes<TIn>::Compute;
      using COut = typename CudaTypes<TOut>::Compute;
      LaunchMapUnary(args.device, static_cast<const TIn*>(args.x), static_cast<TOut*>(args.out),
                     args.n, CastFn<CIn, COut>{});
    });
  });
}

}  // namespace cuda
}  // namespace hetkern
