// Choosing the CUDA stream hetkern's calls run on, from C++.
//
// hetkern's CUDA kernels launch on the stream TVM-FFI's environment holds for
// the tensors' device on the calling thread (TVMFFIEnvGetStream): the legacy
// default stream unless someone set one. Python frameworks set it for each
// call (torch's current stream); a C++ caller sets it with this guard:
//
//   cudaStream_t stream = ...;
//   {
//     hetkern::CudaStreamGuard on_stream(/*device_id=*/0, stream);
//     hetkern::scale(out, x, 2.0);   // launched on `stream`, asynchronously
//   }                                // the previous stream is back
//
// The setting is per thread and per device, so threads and devices do not
// interfere; guards nest. Nothing is synchronised or allocated, so calls under
// a guard can be captured in a CUDA graph on that stream. The header needs no
// CUDA headers (a cudaStream_t converts to the void* it takes) and compiles in
// CPU-only programs; on a CPU-only hetkern the stream is simply never used.
#pragma once

#include <dlpack/dlpack.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <cstdint>

namespace hetkern {

class CudaStreamGuard {
 public:
  // Makes `stream` the stream of CUDA device `device_id` for this thread.
  CudaStreamGuard(int32_t device_id, void* stream) : device_id_(device_id) {
    TVM_FFI_CHECK_SAFE_CALL(TVMFFIEnvSetStream(kDLCUDA, device_id, stream, &previous_));
  }
  // Puts the stream that was set before back.
  ~CudaStreamGuard() { TVMFFIEnvSetStream(kDLCUDA, device_id_, previous_, nullptr); }

  CudaStreamGuard(const CudaStreamGuard&) = delete;
  CudaStreamGuard& operator=(const CudaStreamGuard&) = delete;

 private:
  int32_t device_id_;
  TVMFFIStreamHandle previous_ = nullptr;
};

// The stream hetkern's calls on CUDA device `device_id` use from this thread now.
inline void* current_cuda_stream(int32_t device_id) {
  return TVMFFIEnvGetStream(kDLCUDA, device_id);
}

}  // namespace hetkern
