// hetkern: CPU (Highway SIMD) and CUDA kernels behind one entry per op.
//
// Every op takes tvm::ffi::TensorView arguments (build one from any DLTensor,
// e.g. `TensorView(&dl_tensor)`) and runs on the device its tensors live on:
// the Highway kernel for the best SIMD target of this CPU, or the CUDA kernel
// on the stream TVMFFIEnvGetStream() returns for that device (the default
// stream unless a framework, or hetkern::CudaStreamGuard, set one). Outputs come first and are allocated by
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
#include "hetkern/stream.h"  // CudaStreamGuard: the CUDA stream of these calls

#define HETKERN_API __attribute__((visibility("default")))

namespace hetkern {

using tvm::ffi::TensorView;

// out = x * factor, elementwise; out and x have the same shape, dtype and
// device; out may be x (in place).
HETKERN_API void scale(TensorView out, TensorView x, double factor);

// ---- Ops: [elementwise] binary ops, axpby, cast

// out = x + y, x - y, x * y, x / y elementwise, computed in the compute type
// and rounded once (bit-equal to torch). y has x's dtype and device and x's
// shape, a trailing part of it (a (D,) y for an (N, D) x), shape (1,) or ();
// or y is a number, rounded to the compute type first. out has x's shape and
// dtype; it may be x, or y when y has x's shape.
HETKERN_API void add(TensorView out, TensorView x, TensorView y);
HETKERN_API void add(TensorView out, TensorView x, double y);
HETKERN_API void sub(TensorView out, TensorView x, TensorView y);
HETKERN_API void sub(TensorView out, TensorView x, double y);
HETKERN_API void mul(TensorView out, TensorView x, TensorView y);
HETKERN_API void mul(TensorView out, TensorView x, double y);
HETKERN_API void div(TensorView out, TensorView x, TensorView y);
HETKERN_API void div(TensorView out, TensorView x, double y);
// out = a*x + b*y as round(round(a*x) + round(b*y)) in the compute type (no
// FMA); y as for add (an array).
HETKERN_API void axpby(TensorView out, TensorView x, TensorView y, double a, double b);
// out = x converted to out's dtype (round to nearest even; float64 to
// float16/bfloat16 goes through float32, as torch does); same shape and device.
HETKERN_API void cast(TensorView out, TensorView x);

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
//
// out = reduction of x over its last dimension (axis = -1, or x.ndim - 1;
// out has shape x.shape[:-1], 0-d for 1-D x) or over the whole array
// (axis = None; out is 0-d). out has x's dtype and device and overlaps no
// input; the accumulation is float32 (float64 for float64 input, and for
// every input of norm). Empty rows give 0; max of an empty row throws.
// scratch: only CUDA uses it, and only when a row is longer than
// kReduceCudaChunk (8192) elements: a contiguous float64 array on x's device
// with at least rows * ceil(cols / 8192) elements (rows = x.numel / cols).
// The sum of x's elements.
HETKERN_API void sum(TensorView out, TensorView x, tvm::ffi::Optional<int64_t> axis,
                     tvm::ffi::Optional<TensorView> scratch);
// The largest element; NaN if any element is NaN.
HETKERN_API void max(TensorView out, TensorView x, tvm::ffi::Optional<int64_t> axis,
                     tvm::ffi::Optional<TensorView> scratch);
// The sum of x * y; y has x's shape, dtype and device.
HETKERN_API void dot(TensorView out, TensorView x, TensorView y, tvm::ffi::Optional<int64_t> axis,
                     tvm::ffi::Optional<TensorView> scratch);
// The L2 norm: sqrt of the sum of squares.
HETKERN_API void norm(TensorView out, TensorView x, tvm::ffi::Optional<int64_t> axis,
                      tvm::ffi::Optional<TensorView> scratch);

// ---- Ops: [norm] rmsnorm, fused_add_rmsnorm, layernorm, gemma_rmsnorm,
// gemma_fused_add_rmsnorm

// All normalise over the last dimension H of x, shaped (..., H), H >= 1;
// weight and bias have shape (H,), x's device and x's dtype (or float32 for
// float16/bfloat16 x; layernorm's weight and bias then share one dtype); eps
// is finite and > 0. float16/bfloat16 are computed in float32, float64 in
// float64. docs/norm.md has the rounding contracts.

// out = x / sqrt(mean(x^2) + eps) * weight, rounded like vLLM's rms_norm: the
// normalised value is rounded to x's dtype before the weight multiply. out
// has x's shape, dtype and device; it may be x (in place).
HETKERN_API void rmsnorm(TensorView out, TensorView x, TensorView weight, double eps);
// In place, as vLLM's fused_add_rms_norm: residual = x + residual (rounded to
// the dtype), then x = rmsnorm(residual) * weight. x and residual have the
// same shape, dtype and device and must not overlap.
HETKERN_API void fused_add_rmsnorm(TensorView x, TensorView residual, TensorView weight,
                                   double eps);
// Gemma's RMSNorm: out = x / sqrt(mean(x^2) + eps) * (1 + weight), computed
// in float32 (float64 for float64) and rounded once. out may be x.
HETKERN_API void gemma_rmsnorm(TensorView out, TensorView x, TensorView weight, double eps);
// In place: residual = x + residual (rounded to the dtype), then
// x = gemma_rmsnorm(residual, weight). Rules of fused_add_rmsnorm.
HETKERN_API void gemma_fused_add_rmsnorm(TensorView x, TensorView residual, TensorView weight,
                                         double eps);
// out = (x - mean) / sqrt(var + eps) * weight + bias (biased variance, as
// torch.nn.functional.layer_norm); no bias when `bias` is empty. out may be x.
HETKERN_API void layernorm(TensorView out, TensorView x, TensorView weight,
                           tvm::ffi::Optional<TensorView> bias, double eps);

// fp8-quantising norms (FlashInfer's rmsnorm_quant, fused_add_rmsnorm_quant;
// argument order as FlashInfer's, out first): out (x's shape and device,
// float8_e4m3fn or uint8 holding its bits, any row stride) =
// e4m3(clamp(y / scale, -448, 448)), rounded to nearest even as torch's
// .to(torch.float8_e4m3fn); NaN stays NaN. y is the norm's value in the
// compute type, not rounded to x's dtype. scale: one float32 on x's device.
// out shares memory with no input. docs/norm.md has the contract.
HETKERN_API void rmsnorm_quant(TensorView out, TensorView x, TensorView weight, TensorView scale,
                               double eps);
// residual = x + residual (rounded to the dtype, in place); out = quant of
// rmsnorm of the unrounded sum. x is only read.
HETKERN_API void fused_add_rmsnorm_quant(TensorView out, TensorView x, TensorView residual,
                                         TensorView weight, TensorView scale, double eps);
HETKERN_API void layernorm_quant(TensorView out, TensorView x, TensorView weight,
                                 TensorView scale, tvm::ffi::Optional<TensorView> bias, double eps);

// ---- Ops: [softmax] softmax, log_softmax

// out = softmax(x) over the last dimension (x shaped (..., L)): exp(x - max) /
// sum(exp(x - max)), computed in float32 (float64 for float64) and rounded
// once. Same shape, dtype and device; out may be x. A row with NaN or +inf,
// or with every entry -inf, gives NaN like torch; L = 0 writes nothing.
HETKERN_API void softmax(TensorView out, TensorView x);
// out = log_softmax(x) = x - max - log(sum(exp(x - max))), same rules.
HETKERN_API void log_softmax(TensorView out, TensorView x);

// ---- Ops: [rope] rotary embedding

// Rotary position embedding, in place, as vLLM's `rotary_embedding` op (the
// in-place tensors come first; Python: rope(positions, query, key, head_size,
// cos_sin_cache, is_neox)). positions: int64/int32, (num_tokens,) or
// (batch, seq) = S. query: (*S, heads * head_size) or (*S, heads, head_size);
// key: likewise with its own head count, or absent. cos_sin_cache:
// (max_position, rot_dim), cos in its first rot_dim/2 columns and sin in the
// rest, rot_dim even <= head_size; its dtype is the query's or float32. The
// first rot_dim features of every head rotate: pairs (i, i + rot_dim/2) when
// is_neox, else (2i, 2i+1). float16/bfloat16 compute in float32, rounded once.
// CPU: positions outside [0, max_position) throw ValueError before any write;
// CUDA (no host sync): tokens with such positions are left unchanged.
HETKERN_API void rope(TensorView query, tvm::ffi::Optional<TensorView> key, TensorView positions,
                      TensorView cos_sin_cache, int64_t head_size, bool is_neox);

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

// Version of the Highway library built in, e.g. "1.3.0".
HETKERN_API std::string highway_version();
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
