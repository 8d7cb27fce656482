// hetkern: CPU (Highway SIMD) and CUDA kernels behind one entry per op.
//
// Every op takes tvm::ffi::TensorView arguments (build one from any DLTensor,
// e.g. `TensorView(&dl_tensor)`) and runs on the device its tensors live on:
// the Highway kernel for the best SIMD target of this CPU, or the CUDA kernel
// on the stream TVMFFIEnvGetStream() returns for that device (the default
// stream unless a framework set one). Outputs come first and are allocated by
// the caller. Bad arguments throw tvm::ffi::Error (kinds "ValueError" or
// "TypeError") before anything is written.
//
// Supported dtypes: float32, float64, float16, bfloat16; arrays must be
// contiguous. float16/bfloat16 are computed in float32 and rounded to nearest
// even, which makes results bit-equal to torch's for exact ops.
#pragma once

#include <tvm/ffi/container/tensor.h>

#include <string>
#include <vector>

#include "hetkern/config.h"

#define HETKERN_API __attribute__((visibility("default")))

namespace hetkern {

using tvm::ffi::TensorView;

// out = x * factor, elementwise; out and x have the same shape, dtype and
// device; out may be x (in place).
HETKERN_API void scale(TensorView out, TensorView x, double factor);

// ---- Ops: [elementwise] binary ops, axpby, cast

// ---- Ops: [activation] activations and gated activations

// ---- Ops: [reduce] row and whole-array reductions

// ---- Ops: [norm] rmsnorm, fused_add_rmsnorm, layernorm

// ---- Ops: [softmax] softmax, log_softmax

// out = softmax(x) over the last dimension (x shaped (..., L)): exp(x - max) /
// sum(exp(x - max)), computed in float32 (float64 for float64) and rounded
// once. Same shape, dtype and device; out may be x. A row with NaN or +inf,
// or with every entry -inf, gives NaN like torch; L = 0 writes nothing.
HETKERN_API void softmax(TensorView out, TensorView x);
// out = log_softmax(x) = x - max - log(sum(exp(x - max))), same rules.
HETKERN_API void log_softmax(TensorView out, TensorView x);

// ---- Ops: [rope] rotary embedding

// ---- Build and runtime information -------------------------------------

HETKERN_API std::string version();
HETKERN_API bool built_with_cuda();
// SM versions the CUDA kernels were compiled for, e.g. {"80", "90"}.
HETKERN_API std::vector<std::string> cuda_archs();

// ---- CPU threads ---------------------------------------------------------

// Threads the CPU kernels use for large arrays (small ones stay on the calling
// thread): set_num_threads(n), else HETKERN_NUM_THREADS, else OpenMP's default.
HETKERN_API int num_threads();
// n >= 1 sets the count; 0 returns to the default. Throws ValueError for n < 0.
HETKERN_API void set_num_threads(int n);

// ---- CPU SIMD target selection ----------------------------------------

// Highway targets compiled into the library, best first (e.g. AVX3, AVX2, ...).
HETKERN_API std::vector<std::string> compiled_cpu_targets();
// The compiled targets this CPU can run, best first.
HETKERN_API std::vector<std::string> available_cpu_targets();
// The target the CPU kernels use now.
HETKERN_API std::string cpu_target();
// Forces the CPU kernels onto one available target by name ("SSE4", ...);
// "" or "auto" returns to the best one. Process-wide; not meant to be changed
// while other threads run kernels. Throws ValueError for an unknown name.
HETKERN_API void set_cpu_target(const std::string& name);

}  // namespace hetkern
