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

// out = f(x) elementwise, like the torch functions of the same name; out and
// x have the same shape, dtype and device; out may be x (in place).
// relu is exact; the others are accurate to a few float32 ulp (docs/activation.md).
HETKERN_API void relu(TensorView out, TensorView x);
HETKERN_API void sigmoid(TensorView out, TensorView x);
HETKERN_API void silu(TensorView out, TensorView x);
// approximate: "none" (x * Phi(x), the erf form) or "tanh".
HETKERN_API void gelu(TensorView out, TensorView x, const std::string& approximate);
HETKERN_API void tanh(TensorView out, TensorView x);
HETKERN_API void exp(TensorView out, TensorView x);

// Gated activations (vLLM/sgl-kernel): x has shape (..., 2 * d), out (..., d),
// out = act(x[..., :d]) * x[..., d:] computed in float32 (float64 for
// float64) and rounded once. out must not overlap x.
HETKERN_API void silu_and_mul(TensorView out, TensorView x);
HETKERN_API void gelu_and_mul(TensorView out, TensorView x, const std::string& approximate);

// ---- Ops: [reduce] row and whole-array reductions

// ---- Ops: [norm] rmsnorm, fused_add_rmsnorm, layernorm

// ---- Ops: [softmax] softmax, log_softmax

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
