// Entries of the normalisation ops (over the last dimension of x): validate
// every argument, then run the kernel pair on the arguments' device.
#include <tvm/ffi/function.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

// x: rows of a non-empty last dimension (any row stride).
NormArgs CheckRows(const char* op, const TensorView& x, double eps, const RowsView& xv) {
  HETKERN_CHECK(x.ndim() >= 1, ValueError)
      << "hetkern." << op << ": 'x' is 0-dimensional; expected shape (..., H) with H >= 1";
  HETKERN_CHECK(xv.cols >= 1, ValueError)
      << "hetkern." << op << ": 'x' has an empty last dimension; expected shape (..., H) with H >= 1";
  HETKERN_CHECK(std::isfinite(eps) && eps > 0, ValueError)
      << "hetkern." << op << ": 'eps' is " << eps << "; expected a finite number > 0";
  NormArgs args{};
  args.dtype = xv.array.dtype;
  args.param_dtype = args.dtype;  // until CheckRowParam has seen the weight
  args.device = xv.array.device;
  args.hidden = xv.cols;
  args.rows = xv.rows;
  args.eps = eps;
  args.x = xv.array.data;
  args.x_stride = xv.row_stride;
  return args;
}

// Whether parameters of `param` dtype may scale x of `x` dtype: x's own, or
// float32 for 16-bit x (mixed precision as in FlashInfer and torch; the
// arithmetic is float32 either way).
bool ParamDTypeFits(DType x, DType param) {
  return param == x || (param == DType::kFloat32 && DTypeSizeOf(x) == 2);
}

// A per-column parameter (weight, bias): shape (H,), x's device, and a dtype
// ParamDTypeFits accepts.
ArrayArg CheckRowParam(const char* op, const char* name, const TensorView& p, const NormArgs& x) {
  const ArrayArg pa = CheckArray(op, name, p);
  HETKERN_CHECK(ParamDTypeFits(x.dtype, pa.dtype), ValueError)
      << "hetkern." << op << ": '" << name << "' has dtype " << DTypeName(pa.dtype)
      << "; expected " << DTypeName(x.dtype) << " like 'x'"
      << (DTypeSizeOf(x.dtype) == 2 ? ", or float32" : "");
  CheckSameDevice(op, "x", x.device, name, pa.device);
  HETKERN_CHECK(p.ndim() == 1 && p.size(0) == x.hidden, ValueError)
      << "hetkern." << op << ": '" << name << "' must have shape (" << x.hidden
      << ",), the last dimension of 'x'; got " << p.ndim() << " dimension(s) and "
      << pa.numel << " element(s)";
  return pa;
}

// `out` like x (same shape, dtype, device; any row stride), x itself or
// disjoint from it.
RowsView CheckOut(const char* op, const TensorView& out, const TensorView& x, const RowsView& xv) {
  CheckSameLayout(op, "x", x, "out", out);
  const RowsView ov = CheckRowsArray(op, "out", out, 1, Access::kWritten);
  CheckSameOrDisjoint(op, "out", ov, "x", xv);
  return ov;
}

// The quant ops' `out`: float8_e4m3fn (or uint8 holding its bits) with x's
// shape and device, any row stride, sharing no byte with x.
RowsView CheckQuantOut(const char* op, const TensorView& out, const TensorView& x,
                       const RowsView& xv) {
  const RowsView ov = CheckRowsArray(op, "out", out, 1, Access::kWritten, Accept::kFloat8E4M3);
  CheckSameDevice(op, "x", xv.array.device, "out", ov.array.device);
  bool same_shape = out.ndim() == x.ndim();
  for (int i = 0; same_shape && i < x.ndim(); ++i) same_shape = out.size(i) == x.size(i);
  HETKERN_CHECK(same_shape, ValueError)
      << "hetkern." << op << ": 'out' has shape " << ShapeString(out) << "; expected "
      << ShapeString(x) << " like 'x'";
  CheckDisjoint(op, "out", FootprintOf(ov), "x", FootprintOf(xv));
  return ov;
}

// The quant ops' `scale`: one float32 on x's device; `written` (out, and
// fused_add_rmsnorm_quant's residual) must not share memory with it, since
// the kernels read it while they write.
const float* CheckScale(const char* op, const TensorView& scale, const NormArgs& x,
                        std::initializer_list<std::pair<const char*, Footprint>> written) {
  const ArrayArg sa = CheckArray(op, "scale", scale);
  HETKERN_CHECK(sa.dtype == DType::kFloat32, ValueError)
      << "hetkern." << op << ": 'scale' has dtype " << DTypeName(sa.dtype)
      << "; expected float32";
  CheckSameDevice(op, "x", x.device, "scale", sa.device);
  HETKERN_CHECK(sa.numel == 1, ValueError)
      << "hetkern." << op << ": 'scale' has shape " << ShapeString(scale)
      << "; expected one element (shape () or (1,))";
  for (const auto& [name, footprint] : written) {
    CheckDisjoint(op, name, footprint, "scale", FootprintOf(scale));
  }
  return static_cast<const float*>(sa.data);
}

// `weight`: checked, then recorded as the launch's parameter type and pointer.
Footprint SetWeight(const char* op, const TensorView& weight, NormArgs& args) {
  const ArrayArg wa = CheckRowParam(op, "weight", weight, args);
  args.param_dtype = wa.dtype;
  args.weight = wa.data;
  return FootprintOf(weight);
}

// `out`: like x for the plain ops, float8_e4m3fn for the quant ops; recorded
// as the launch's output rows.
Footprint SetOut(const char* op, const TensorView& out, const TensorView& x, const RowsView& xv,
                 bool quant, NormArgs& args) {
  const RowsView ov = quant ? CheckQuantOut(op, out, x, xv) : CheckOut(op, out, x, xv);
  args.out = ov.array.data;
  args.out_stride = ov.row_stride;
  return FootprintOf(ov);
}

// rmsnorm, gemma_rmsnorm, and rmsnorm_quant (`scale` given).
void RMSNormEntry(const char* op, bool gemma, const TensorView& out, const TensorView& x,
                  const TensorView& weight, const TensorView* scale, double eps) {
  const RowsView xv = CheckRowsArray(op, "x", x, 1, Access::kRead);
  NormArgs args = CheckRows(op, x, eps, xv);
  args.gemma = gemma;
  const Footprint w = SetWeight(op, weight, args);
  const Footprint o = SetOut(op, out, x, xv, scale != nullptr, args);
  // Written row by row: an out sharing memory with weight would change it
  // for the rows after the first.
  CheckDisjoint(op, "out", o, "weight", w);
  if (scale != nullptr) args.scale = CheckScale(op, *scale, args, {{"out", o}});
  if (args.rows == 0) return;
  HETKERN_LAUNCH(args.device, RMSNorm(args));
}

// fused_add_rmsnorm and gemma_fused_add_rmsnorm (in place: the result goes to
// x), and fused_add_rmsnorm_quant (`out` and `scale` given; x only read).
void FusedAddRMSNormEntry(const char* op, bool gemma, const TensorView* out, const TensorView& x,
                          const TensorView& residual, const TensorView& weight,
                          const TensorView* scale, double eps) {
  const RowsView xv = CheckRowsArray(op, "x", x, 1, out != nullptr ? Access::kRead : Access::kWritten);
  NormArgs args = CheckRows(op, x, eps, xv);
  args.gemma = gemma;
  CheckSameLayout(op, "x", x, "residual", residual);
  const RowsView rv = CheckRowsArray(op, "residual", residual, 1, Access::kWritten);
  const Footprint w = SetWeight(op, weight, args);
  const Footprint r = FootprintOf(rv);
  CheckDisjoint(op, "residual", r, "x", FootprintOf(xv));
  CheckDisjoint(op, "residual", r, "weight", w);
  args.residual = rv.array.data;
  args.residual_stride = rv.row_stride;
  if (out != nullptr) {
    const Footprint o = SetOut(op, *out, x, xv, /*quant=*/true, args);
    CheckDisjoint(op, "out", o, "residual", r);
    CheckDisjoint(op, "out", o, "weight", w);
    args.scale = CheckScale(op, *scale, args, {{"out", o}, {"residual", r}});
  } else {
    CheckDisjoint(op, "x", FootprintOf(xv), "weight", w);
    args.out = const_cast<void*>(args.x);
    args.out_stride = args.x_stride;
  }
  if (args.rows == 0) return;
  HETKERN_LAUNCH(args.device, FusedAddRMSNorm(args));
}

// layernorm, and layernorm_quant (`scale` given).
void LayerNormEntry(const char* op, const TensorView& out, const TensorView& x,
                    const TensorView& weight, const tvm::ffi::Optional<TensorView>& bias,
                    const TensorView* scale, double eps) {
  const RowsView xv = CheckRowsArray(op, "x", x, 1, Access::kRead);
  NormArgs args = CheckRows(op, x, eps, xv);
  const Footprint w = SetWeight(op, weight, args);
  const Footprint o = SetOut(op, out, x, xv, scale != nullptr, args);
  CheckDisjoint(op, "out", o, "weight", w);
  if (bias.has_value()) {
    const ArrayArg ba = CheckRowParam(op, "bias", *bias, args);
    // One parameter type per launch: a float32 weight with a 16-bit bias
    // (or the reverse) has no use worth its instantiations.
    CheckSameDType(op, "weight", args.param_dtype, "bias", ba.dtype);
    CheckDisjoint(op, "out", o, "bias", FootprintOf(*bias));
    args.bias = ba.data;
  }
  if (scale != nullptr) args.scale = CheckScale(op, *scale, args, {{"out", o}});
  if (args.rows == 0) return;
  HETKERN_LAUNCH(args.device, LayerNorm(args));
}

}  // namespace

void rmsnorm(TensorView out, TensorView x, TensorView weight, double eps) {
  RMSNormEntry("rmsnorm", false, out, x, weight, nullptr, eps);
}

void gemma_rmsnorm(TensorView out, TensorView x, TensorView weight, double eps) {
  RMSNormEntry("gemma_rmsnorm", true, out, x, weight, nullptr, eps);
}

void rmsnorm_quant(TensorView out, TensorView x, TensorView weight, TensorView scale, double eps) {
  RMSNormEntry("rmsnorm_quant", false, out, x, weight, &scale, eps);
}

void fused_add_rmsnorm(TensorView x, TensorView residual, TensorView weight, double eps) {
  FusedAddRMSNormEntry("fused_add_rmsnorm", false, nullptr, x, residual, weight, nullptr, eps);
}

void gemma_fused_add_rmsnorm(TensorView x, TensorView residual, TensorView weight, double eps) {
  FusedAddRMSNormEntry("gemma_fused_add_rmsnorm", true, nullptr, x, residual, weight, nullptr, eps);
}

void fused_add_rmsnorm_quant(TensorView out, TensorView x, TensorView residual, TensorView weight,
                             TensorView scale, double eps) {
  FusedAddRMSNormEntry("fused_add_rmsnorm_quant", false, &out, x, residual, weight, &scale, eps);
}

void layernorm(TensorView out, TensorView x, TensorView weight, tvm::ffi::Optional<TensorView> bias,
               double eps) {
  LayerNormEntry("layernorm", out, x, weight, bias, nullptr, eps);
}

void layernorm_quant(TensorView out, TensorView x, TensorView weight, TensorView scale,
                     tvm::ffi::Optional<TensorView> bias, double eps) {
  LayerNormEntry("layernorm_quant", out, x, weight, bias, &scale, eps);
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm, hetkern::rmsnorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_add_rmsnorm, hetkern::fused_add_rmsnorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gemma_rmsnorm, hetkern::gemma_rmsnorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gemma_fused_add_rmsnorm, hetkern::gemma_fused_add_rmsnorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(layernorm, hetkern::layernorm);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm_quant, hetkern::rmsnorm_quant);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_add_rmsnorm_quant, hetkern::fused_add_rmsnorm_quant);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(layernorm_quant, hetkern::layernorm_quant);
