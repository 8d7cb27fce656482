// Entries of the normalisation ops (over the last dimension of x): validate
// every argument, then run the kernel pair on the arguments' device.
#include <tvm/ffi/function.h>

#include <cmath>
#include <cstdint>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

// x: a supported contiguous array with a non-empty last dimension.
NormArgs CheckRows(const char* op, const TensorView& x, double eps) {
  const ArrayArg xa = CheckArray(op, "x", x);
  HETKERN_CHECK(x.ndim() >= 1, ValueError)
      << "hetkern." << op << ": 'x' is 0-dimensional; expected shape (..., H) with H >= 1";
  const RowShape shape = LastDimRows(x);
  const int64_t hidden = shape.cols;
  HETKERN_CHECK(hidden >= 1, ValueError)
      << "hetkern." << op << ": 'x' has an empty last dimension; expected shape (..., H) with H >= 1";
  HETKERN_CHECK(std::isfinite(eps) && eps > 0, ValueError)
      << "hetkern." << op << ": 'eps' is " << eps << "; expected a finite number > 0";
  NormArgs args{};
  args.dtype = xa.dtype;
  args.device = xa.device;
  args.hidden = hidden;
  args.rows = shape.rows;
  args.eps = eps;
  args.x = xa.data;
  return args;
}

// A per-column parameter (weight, bias): shape (H,), x's dtype and device.
ArrayArg CheckRowParam(const char* op, const char* name, const TensorView& p, const NormArgs& x) {
  const ArrayArg pa = CheckArray(op, name, p);
  CheckSameDType(op, "x", x.dtype, name, pa.dtype);
  CheckSameDevice(op, "x", x.device, name, pa.device);
  HETKERN_CHECK(p.ndim() == 1 && p.size(0) == x.hidden, ValueError)
      << "hetkern." << op << ": '" << name << "' must have shape (" << x.hidden
      << ",), the last dimension of 'x'; got " << p.ndim() << " dimension(s) and "
      << pa.numel << " element(s)";
  return pa;
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
  // Written row by row: an out sharing memory with weight would change it
  // for the rows after the first.
  CheckDisjoint(op, "out", out, "weight", weight);
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
  CheckDisjoint(op, "residual", residual, "x", x);
  CheckDisjoint(op, "x", x, "weight", weight);
  CheckDisjoint(op, "residual", residual, "weight", weight);
  args.residual = ra.data;
  args.weight = wa.data;
  args.out = const_cast<void*>(args.x);
  if (args.rows == 0) return;
  HETKERN_LAUNCH(args.device, FusedAddRMSNorm(args));
}

void layernorm(TensorView out, TensorView x, TensorView weight, tvm::ffi::Optional<TensorView> bias,
               double eps) {
  const char* op = "layernorm";
  NormArgs args = CheckRows(op, x, eps);
  const ArrayArg wa = CheckRowParam(op, "weight", weight, args);
  const ArrayArg oa = CheckOut(op, out, x, args);
  CheckDisjoint(op, "out", out, "weight", weight);
  args.weight = wa.data;
  args.out = oa.data;
  if (bias.has_value()) {
    const ArrayArg ba = CheckRowParam(op, "bias", *bias, args);
    CheckDisjoint(op, "out", out, "bias", *bias);
    args.bias = ba.data;
  }
  if (args.rows == 0) return;
  HETKERN_LAUNCH(args.device, LayerNorm(args));
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm, hetkern::rmsnorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_add_rmsnorm, hetkern::fused_add_rmsnorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(layernorm, hetkern::layernorm);
