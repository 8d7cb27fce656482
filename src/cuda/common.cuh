// What every CUDA launcher needs: the caller's device and stream, launch
// error checks, 16-bit float conversions and a grid size for streaming kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/device_guard.h>

#include <cstdint>

#include "src/core/args.h"

namespace hetkern {
namespace cuda {

#define HETKERN_CUDA_CHECK(expr)                                                       \
  do {                                                                                 \
    const cudaError_t hetkern_err_ = (expr);                                           \
    TVM_FFI_CHECK(hetkern_err_ == cudaSuccess, RuntimeError)                           \
        << "CUDA error in " #expr ": " << cudaGetErrorString(hetkern_err_);            \
  } while (0)

// Makes the arguments' device current for the launcher's scope and gives the
// stream the caller's framework set for it (torch's current stream), or the
// legacy default stream when none was set.
class DeviceScope {
 public:
  explicit DeviceScope(DLDevice device)
      : guard_(device.device_id),
        stream_(static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, device.device_id))),
        device_id_(device.device_id) {}
  cudaStream_t stream() const { return stream_; }
  // Blocks for a grid-stride streaming kernel: enough to fill every SM a few
  // times over, no more than the work needs.
  int StreamingBlocks(int64_t work_items, int threads) const;

 private:
  tvm::ffi::CUDADeviceGuard guard_;
  cudaStream_t stream_;
  int device_id_;
};

// Launch-time errors (bad configuration) surface here; asynchronous faults
// surface at the caller's next synchronisation, as with any CUDA library.
inline void CheckLaunch() { HETKERN_CUDA_CHECK(cudaGetLastError()); }

template <class T>
struct CudaTypes;  // storage type -> compute type and conversions
template <>
struct CudaTypes<float> {
  using Compute = float;
  __device__ static float Load(float v) { return v; }
  __device__ static float Store(float v) { return v; }
};
template <>
struct CudaTypes<double> {
  using Compute = double;
  __device__ static double Load(double v) { return v; }
  __device__ static double Store(double v) { return v; }
};
template <>
struct CudaTypes<__half> {
  using Compute = float;
  __device__ static float Load(__half v) { return __half2float(v); }
  __device__ static __half Store(float v) { return __float2half_rn(v); }
};
template <>
struct CudaTypes<__nv_bfloat16> {
  using Compute = float;
  __device__ static float Load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 Store(float v) { return __float2bfloat16_rn(v); }
};

// Calls fn(TypeTag<T>{}) with T the CUDA storage type of `dtype`.
template <class Fn>
inline void VisitCudaType(DType dtype, Fn&& fn) {
  VisitDType<float, double, __half, __nv_bfloat16>(dtype, fn);
}

}  // namespace cuda
}  // namespace hetkern
