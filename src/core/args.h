// Validated kernel arguments: plain structs shared by the entry layer, the
// Highway kernels and the CUDA launchers (so this header stays nvcc-friendly).
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>

#include "hetkern/config.h"  // HETKERN_WITH_CUDA

namespace hetkern {

// The floating-point storage types every op supports, and kFloat8E4M3
// (float8_e4m3fn, or uint8 holding its bits): an output-only type that
// validation admits only where an op asks for it (the quant norms' 'out'),
// so no kernel visiting a DType ever sees it.
enum class DType : uint8_t { kFloat32, kFloat64, kFloat16, kBFloat16, kFloat8E4M3 };

// Bytes per element.
constexpr size_t DTypeSizeOf(DType dtype) {
  return dtype == DType::kFloat64   ? 8
         : dtype == DType::kFloat32 ? 4
         : dtype == DType::kFloat8E4M3 ? 1
                                       : 2;
}

template <class T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with T the storage type of `dtype`; each device names
// its own 16-bit types (hwy::float16_t on CPU, __half on CUDA).
template <class F32, class F64, class F16, class BF16, class Fn>
inline void VisitDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
      return fn(TypeTag<F32>{});
    case DType::kFloat64:
      return fn(TypeTag<F64>{});
    case DType::kFloat16:
      return fn(TypeTag<F16>{});
    case DType::kBFloat16:
      return fn(TypeTag<BF16>{});
    case DType::kFloat8E4M3:  // output-only: never an op's computing dtype
      return;
  }
}

// out = f(x) elementwise over n contiguous elements; out == x is allowed.
struct UnaryArgs {
  DType dtype;
  DLDevice device;
  int64_t n;
  const void* x;
  void* out;
};

// ---- Arguments of each op family (each family adds below its marker) ----

// [elementwise] binary ops, axpby, cast

// out = f(x, y) over n contiguous elements, y repeating every y_period
// elements: the trailing-dims broadcast of an (N, D) x with a (D,) y has
// y_period == D; y_period == n when y has x's shape, 1 for a one-element y.
// out may equal x, or y when y_period == n; no other overlap is allowed.
struct BinaryArgs {
  DType dtype;
  DLDevice device;
  int64_t n;
  const void* x;
  const void* y;
  int64_t y_period;
  void* out;
};

enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv };

// Calls fn(F<op>{}) for the runtime `op`, F being a device's functor template
// (BinaryFn in src/cpu/elementwise.cc and src/cuda/elementwise.cu), so that
// kernels are instantiated once per op rather than switching per element.
template <template <BinaryOp> class F, class Fn>
inline void VisitBinaryOp(BinaryOp op, Fn&& fn) {
  switch (op) {
    case BinaryOp::kAdd:
      return fn(F<BinaryOp::kAdd>{});
    case BinaryOp::kSub:
      return fn(F<BinaryOp::kSub>{});
    case BinaryOp::kMul:
      return fn(F<BinaryOp::kMul>{});
    case BinaryOp::kDiv:
      return fn(F<BinaryOp::kDiv>{});
  }
}

// out = x converted from in_dtype to out_dtype over n contiguous elements;
// out and x do not overlap unless in_dtype == out_dtype and out == x.
struct CastArgs {
  DType in_dtype;
  DType out_dtype;
  DLDevice device;
  int64_t n;
  const void* x;
  void* out;
};

// [activation] activations and gated activations

// The activation functions; the gated ops take kSilu, kGelu or kGeluTanh.
enum class Activation : uint8_t { kRelu, kSigmoid, kSilu, kGelu, kGeluTanh, kTanh, kExp };

template <Activation kAct>
struct ActivationTag {
  static constexpr Activation value = kAct;
};

// Calls fn(ActivationTag<act>{}), so that kernels are instantiated once per
// activation rather than switching per element.
template <class Fn>
inline void VisitActivation(Activation act, Fn&& fn) {
  using A = Activation;
  switch (act) {
    case A::kRelu: return fn(ActivationTag<A::kRelu>{});
    case A::kSigmoid: return fn(ActivationTag<A::kSigmoid>{});
    case A::kSilu: return fn(ActivationTag<A::kSilu>{});
    case A::kGelu: return fn(ActivationTag<A::kGelu>{});
    case A::kGeluTanh: return fn(ActivationTag<A::kGeluTanh>{});
    case A::kTanh: return fn(ActivationTag<A::kTanh>{});
    case A::kExp: return fn(ActivationTag<A::kExp>{});
  }
}

// out[r, i] = act(x[r, i]) * x[r, d + i] over `rows` rows of 2 * d inputs
// and d outputs; each row is contiguous, rows are x_stride (out_stride)
// elements apart. out does not overlap x.
struct GatedArgs {
  DType dtype;
  DLDevice device;
  int64_t rows;
  int64_t d;
  const void* x;
  void* out;
  int64_t x_stride;
  int64_t out_stride;
};

// [reduce] row and whole-array reductions

enum class ReduceOp : uint8_t { kSum, kMax, kDot, kNorm };

// On CUDA a row longer than this is reduced in chunks of this many elements:
// one partial per chunk in a scratch buffer, combined in chunk order.
constexpr int64_t kReduceCudaChunk = 8192;

// Scratch elements (float64) the CUDA launcher needs for `rows` rows of
// `cols` elements; 0 when every row fits one chunk.
constexpr int64_t ReduceScratchNumel(int64_t rows, int64_t cols) {
  return cols > kReduceCudaChunk ? rows * ((cols + kReduceCudaChunk - 1) / kReduceCudaChunk) : 0;
}

// out[r] = reduce(x[r * cols : (r + 1) * cols]) for r in [0, rows); a
// whole-array reduction is one row. y is dot's second operand (x's layout),
// nullptr otherwise. out overlaps neither x nor y.
struct ReduceArgs {
  DType dtype;
  DLDevice device;
  int64_t rows;
  int64_t cols;
  const void* x;
  const void* y;
  void* out;
  double* scratch;  // CUDA only: ReduceScratchNumel(rows, cols) elements, else unused
};

// [norm] rmsnorm, fused_add_rmsnorm, layernorm (and their Gemma variants)
// Normalisation of `rows` rows of `hidden` contiguous elements each (the last
// dimension of x); row r of x starts at x + r * x_stride (likewise residual
// and out, each with its own stride; 64-bit offsets). Which pointers an op uses:
//   rmsnorm            out = rmsnorm(x) * weight          (out may be x)
//   fused_add_rmsnorm  residual = x + residual; x = rmsnorm(residual) * weight
//                      (in place: out is x; residual is read and written)
//   layernorm          out = (x - mean) * rstd * weight + bias (bias may be null)
// The RMS norms scale in one of two styles (docs/norm.md):
//   gemma == false     out = T(T(v * inv_rms) * weight)     (vLLM's rms_norm)
//   gemma == true      out = T(v * inv_rms * (1 + weight))  (Gemma: rounded once)
// The quant ops (scale != nullptr) write float8_e4m3fn bits instead, of
// e4m3(clamp(y / *scale, -448, 448)) with y the compute-type value before
// any rounding to x's dtype (FlashInfer's rmsnorm_quant); fused_add_rmsnorm
// then reads x (not written) and writes out, and its variance uses the
// unrounded sum x + residual, as FlashInfer's fused_add_rmsnorm_quant.
struct NormArgs {
  DType dtype;        // x, residual, out (quant ops: x, residual)
  DType param_dtype;  // weight and bias: dtype, or float32 when dtype is 16-bit
  DLDevice device;
  bool gemma;  // RMS norms only
  int64_t rows;
  int64_t hidden;
  double eps;
  const void* x;
  void* residual;      // fused_add_rmsnorm only
  const void* weight;  // (hidden,)
  const void* bias;    // layernorm only; nullptr: no bias
  void* out;
  int64_t x_stride;
  int64_t residual_stride;  // fused_add_rmsnorm only
  int64_t out_stride;
  const float* scale;  // quant ops: one float32 on args.device; else nullptr
};

// [softmax] softmax, log_softmax

// out[r, :] = softmax(x[r, :]) (or log_softmax when `log`) over rows of
// `cols` contiguous elements, x_stride (out_stride) elements apart; out == x
// (same stride) is allowed.
struct SoftmaxArgs {
  DType dtype;
  DLDevice device;
  int64_t rows;
  int64_t cols;
  const void* x;
  void* out;
  bool log;
  int64_t x_stride;
  int64_t out_stride;
};

// [rope] rotary embedding

// Integer types accepted for rope's positions.
enum class PositionType : uint8_t { kInt32, kInt64 };

// Rotary embedding applied in place to query and (when key != nullptr) key,
// both (num_tokens, heads, head_size) with each token's heads contiguous and
// tokens query_stride (key_stride) elements apart. Pair p of a head (p <
// rot_dim / 2) is (p, p + rot_dim / 2) when is_neox, else (2p, 2p + 1); it
// rotates by the angle whose cos and sin are cos_sin_cache[pos][p] and
// cos_sin_cache[pos][rot_dim / 2 + p]. Features past rot_dim stay unchanged.
struct RopeArgs {
  DType dtype;        // query and key
  DType cache_dtype;  // dtype, or float32
  PositionType position_type;
  DLDevice device;
  int64_t num_tokens;
  int64_t num_heads;
  int64_t num_kv_heads;  // 0 when key is absent
  int64_t head_size;
  int64_t rot_dim;       // even, in [2, head_size]
  int64_t max_position;  // rows of cos_sin_cache
  bool is_neox;
  const void* positions;  // num_tokens entries
  void* query;
  void* key;  // nullptr: no key
  const void* cos_sin_cache;
  int64_t query_stride;
  int64_t key_stride;
};

}  // namespace hetkern
