// Entries of the normalisation ops (over the last dimension of x): validate
// every argument, then run the kernel pair on the arguments' device.
#include <tvm/ffi/function.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

std::string DeviceName(DLDevice d) {
  if (d.device_type == kDLCPU) return "cpu";
  if (d.device_type == kDLCUDA) return "cuda:" + std::to_string(d.device_id);
  return "device type " + std::to_string(d.device_type);
}

// x: a supported contiguous array with a non-empty last dimension.
NormArgs CheckRows(const char* op, const TensorView& x, double eps) {
  const ArrayArg xa = CheckArray(op, "x", x);
  HETKERN_CHECK(x.ndim() >= 1, ValueError)
      << "hetkern." << op << ": 'x' is 0-dimensional; expected shape (..., H) with H >= 1";
  const int64_t hidden = x.size(x.ndim() - 1);
  HETKERN_CHECK(hidden >= 1, ValueError)
      << "hetkern." << op << ": 'x' has an empty last dimension; expected shape (..., H) with H >= 1";
  HETKERN_CHECK(std::isfinite(eps) && eps > 0, ValueError)
      << "hetkern." << op << ": 'eps' is " << eps << "; expected a finite number > 0";
  NormArgs args{};
  args.dtype = xa.dtype;
  args.device = xa.device;
  args.hidden = hidden;
  args.rows = xa.numel / hidden;
  args.eps = eps;
  args.x = xa.data;
  return args;
}

// A per-column parameter (weight, bias): shape (H,), x's dtype and device.
ArrayArg CheckRowParam(const char* op, const char* name, const TensorView& p, const NormArgs& x) {
  const ArrayArg pa = CheckArray(op, name, p);
  HETKERN_CHECK(pa.dtype == x.dtype, ValueError)
      << "hetkern." << op << ": '" << name << "' has dtype " << DTypeName(pa.dtype)
      << "; expected " << DTypeName(x.dtype) << " like 'x'";
  HETKERN_CHECK(pa.device.device_type == x.device.device_type &&
                    pa.device.device_id == x.device.device_id,
                ValueError)
      << "hetkern." << op << ": '" << name << "' is on " << DeviceName(pa.device) << "; expected "
      << DeviceName(x.device) << " like 'x'";
  HETKERN_CHECK(p.ndim() == 1 && p.size(0) == x.hidden, ValueError)
      << "hetkern." << op << ": '" << name << "' must have shape (" << x.hidden
      << ",), the last dimension of 'x'; got " << p.ndim() << " dimension(s) and "
      << pa.numel << " element(s)";
  return pa;
}

// Arrays that are written must not share any byte with another argument
// (an output aliasing `weight` would change it for the rows after the first).
void CheckDisjoint(const char* op, const char* written_name, const ArrayArg& written,
                   const char* other_name, const ArrayArg& other) {
  if (written.numel == 0 || other.numel == 0) return;
  const auto w_begin = reinterpret_cast<uintptr_t>(written.data);
  const auto o_begin = reinterpret_cast<uintptr_t>(other.data);
  const uintptr_t w_end = w_begin + written.numel * DTypeSizeOf(written.dtype);
  const uintptr_t o_end = o_begin + other.numel * DTypeSizeOf(other.dtype);
  HETKERN_CHECK(w_end <= o_begin || o_end <= w_begin, ValueError)
      << "hetkern." << op << ": '" << written_name << "' overlaps '" << other_name
      << "'; expected separate arrays";
}

// `out` like x (same shape, dtype, device), x itself or disjoint from it.
ArrayArg CheckOut(const char* op, const TensorView& out, const TensorView& x,
                  const NormArgs& args) {
  CheckSameLayout(op, "x", x, "out", out);
  const ArrayArg oa = CheckArray(op, "out", out);
  CheckNoPartialOverlap(op, "out", oa, "x", ArrayArg{const_cast<void*>(args.x),
                                                      args.rows * args.hidden, args.dtype,
                                                      args.device});
  return oa;
}

}  // namespace

void rmsnorm(TensorView out, TensorView x, TensorView weight, double eps) {
  const char* op = "rmsnorm";
  NormArgs args = CheckRows(op, x, eps);
  const ArrayArg wa = CheckRowParam(op, "weight", weight, args);
  const ArrayArg oa = CheckOut(op, out, x, args);
  CheckDisjoint(op, "out", oa, "weight", wa);
  args.weight = wa.data;
  args.out = oa.data;
  if (args.rows == 0) return;
  HETKERN_LAUNCH(args.device, RMSNorm(args));
}

void fused_add_rmsnorm(TensorView x, TensorView residual, TensorView weight, double eps) {
  const char* op = "fused_add_rmsnorm";
  NormArgs args = CheckRows(op, x, eps);
  CheckSameLayout(op, "x", x, "residual", residual);
  const ArrayArg ra = CheckArray(op, "residual", residual);
  const ArrayArg wa = CheckRowParam(op, "weight", weight, args);
  const ArrayArg xa{const_cast<void*>(args.x), args.rows * args.hidden, args.dtype, args.device};
  CheckDisjoint(op, "residual", ra, "x", xa);
  CheckDisjoint(op, "x", xa, "weight", wa);
  CheckDisjoint(op, "residual", ra, "weight", wa);
  args.residual = ra.data;
  args.weight = wa.data;
  args.out = xa.data;
  if (args.rows == 0) return;
  HETKERN_LAUNCH(args.device, FusedAddRMSNorm(args));
}

void layernorm(TensorView out, TensorView x, TensorView weight, tvm::ffi::Optional<TensorView> bias,
               double eps) {
  const char* op = "layernorm";
  NormArgs args = CheckRows(op, x, eps);
  const ArrayArg wa = CheckRowParam(op, "weight", weight, args);
  const ArrayArg oa = CheckOut(op, out, x, args);
  CheckDisjoint(op, "out", oa, "weight", wa);
  args.weight = wa.data;
  args.out = oa.data;
  if (bias.has_value()) {
    const ArrayArg ba = CheckRowParam(op, "bias", *bias, args);
    CheckDisjoint(op, "out", oa, "bias", ba);
    args.bias = ba.data;
  }
  if (args.rows == 0) return;
  HETKERN_LAUNCH(args.device, LayerNorm(args));
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm, hetkern::rmsnorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_add_rmsnorm, hetkern::fused_add_rmsnorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(layernorm, hetkern::layernorm);
