// Validated kernel arguments: plain structs shared by the entry layer, the
// Highway kernels and the CUDA launchers (so this header stays nvcc-friendly).
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>

#include "hetkern/config.h"  // HETKERN_WITH_CUDA

namespace hetkern {

// The floating-point storage types every op supports.
enum class DType : uint8_t { kFloat32, kFloat64, kFloat16, kBFloat16 };

// Bytes per element.
constexpr size_t DTypeSizeOf(DType dtype) {
  return dtype == DType::kFloat64 ? 8 : dtype == DType::kFloat32 ? 4 : 2;
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

// out[r, i] = act(x[r, i]) * x[r, d + i] over `rows` contiguous rows of 2 * d
// inputs and d outputs; out does not overlap x.
struct GatedArgs {
  DType dtype;
  DLDevice device;
  int64_t rows;
  int64_t d;
  const void* x;
  void* out;
};

// [reduce] row and whole-array reductions

// [norm] rmsnorm, fused_add_rmsnorm, layernorm

// [softmax] softmax, log_softmax

// [rope] rotary embedding

}  // namespace hetkern
