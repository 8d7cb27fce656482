// What every CUDA launcher needs: the caller's device and stream, launch
// error checks, 16-bit float conversions and a grid size for streaming kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/device_guard.h>

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "src/core/args.h"

namespace hetkern {
namespace cuda {

#define HETKERN_CUDA_CHECK(expr)                                                       \
  do {                                                                                 \
    const cudaError_t hetkern_err_ = (expr);                                           \
    TVM_FFI_CHECK(hetkern_err_ == cudaSuccess, RuntimeError)                           \
        << "CUDA error in " #expr ": " << cudaGetErrorString(hetkern_err_);            \
  } while (0)

// A compile-time int as a type, to pick a kernel instance by value
// (launch(Int<512>{}, ...)).
template <int N>
using Int = std::integral_constant<int, N>;

// A non-negative int per device, computed on that device's first ask and
// kept: launchers ask on every call, and the answers are driver calls. Tag
// names the cache (one per question).
template <class Tag, class Compute>
int CachedPerDevice(int device_id, const Compute& compute) {
  constexpr int kCachedDevices = 64;
  static std::atomic<int> cached[kCachedDevices] = {};  // value + 1; 0: unknown
  int known = device_id < kCachedDevices ? cached[device_id].load(std::memory_order_relaxed) : 0;
  if (known == 0) {
    known = compute() + 1;
    if (device_id < kCachedDevices) cached[device_id].store(known, std::memory_order_relaxed);
  }
  return known - 1;
}

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
  int device_id() const { return device_id_; }
  // Blocks for a grid-stride streaming kernel: enough to fill every SM a few
  // times over, no more than the work needs.
  int StreamingBlocks(int64_t work_items, int threads) const;
  int Multiprocessors() const;
  // Whether the device has programmatic dependent launch (sm_90 and later).
  bool HasDependentLaunch() const;
  // Whether the device has thread block clusters (sm_90 and later, too).
  bool HasClusters() const { return HasDependentLaunch(); }
  // Whether kernels may be launched cooperatively (grid-wide syncs).
  bool HasCooperativeLaunch() const;
  // The most shared memory one block may ask for (cudaFuncSetAttribute).
  int SharedMemoryPerBlock() const;
  int SharedMemoryPerSm() const;

 private:
  tvm::ffi::CUDADeviceGuard guard_;
  cudaStream_t stream_;
  int device_id_;
};

// ---- Programmatic dependent launch (sm_90+) ----------------------------------
// A kernel launched with LaunchDependent may start while the previous kernel
// on the stream is still running: its launch, block scheduling and prologue
// overlap that kernel's tail (in a CUDA graph of back-to-back calls, most of
// a small kernel's cost). Such a kernel calls WaitForPriorGrids before its
// first access to global memory: that waits for the previous grid to finish
// and its writes to be visible, so the semantics are those of a plain launch.
// AllowDependentGrids lets the next such kernel start early.

__device__ __forceinline__ void WaitForPriorGrids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void AllowDependentGrids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// Starts reading `bytes` at p into L2 without waiting for them; every thread
// of the block's x dimension calls it with the same arguments. sm_90+: one
// bulk prefetch by thread 0 (p 16-byte aligned, bytes a multiple of 16);
// before, a line a thread in turn.
__device__ __forceinline__ void PrefetchToL2(const void* p, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
  }
#else
  for (uint32_t offset = threadIdx.x * 128; offset < bytes; offset += blockDim.x * 128) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(static_cast<const char*>(p) + offset));
  }
#endif
}

// A kernel's launch geometry: grid, block, dynamic shared memory,
// thread-block clusters of cluster_blocks blocks along x (sm_90+; 1: none),
// and whether the launch is cooperative (every block resident at once, for
// grid-wide syncs; the caller keeps the grid within what the GPU holds).
struct LaunchShape {
  dim3 grid;
  dim3 block;
  size_t shared_bytes = 0;
  unsigned cluster_blocks = 1;
  bool cooperative = false;
};

// kernel<<<shape...>>>(args...) on the caller's stream, as a programmatic
// dependent launch where the device has it (every kernel so launched calls
// WaitForPriorGrids before touching global memory), but for cooperative
// launches, which are plain ones.
template <class... Params, class... Args>
void LaunchDependent(const DeviceScope& scope, void (*kernel)(Params...), const LaunchShape& shape,
                     Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = shape.grid;
  config.blockDim = shape.block;
  config.dynamicSmemBytes = shape.shared_bytes;
  config.stream = scope.stream();
  cudaLaunchAttribute attributes[2];
  unsigned count = 0;
  if (shape.cooperative) {
    attributes[count].id = cudaLaunchAttributeCooperative;
    attributes[count++].val.cooperative = 1;
  } else if (scope.HasDependentLaunch()) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (shape.cluster_blocks > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count++].val.clusterDim = {shape.cluster_blocks, 1, 1};
  }
  config.attrs = attributes;
  config.numAttrs = count;
  HETKERN_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
}

template <class... Params, class... Args>
void LaunchDependent(const DeviceScope& scope, void (*kernel)(Params...), dim3 grid, dim3 block,
                     Args&&... args) {
  LaunchDependent(scope, kernel, LaunchShape{grid, block}, std::forward<Args>(args)...);
}

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
