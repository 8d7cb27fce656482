// Entries of the activations and gated activations: validate everything, then
// run the kernel pair on the arguments' device.
#include <tvm/ffi/function.h>

#include <string>
#include <vector>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

// "(2, 3)" for the shape of `t` with its last dimension halved.
std::string HalvedShapeString(const TensorView& t) {
  std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
  if (!dims.empty()) dims.back() /= 2;
  return ShapeString(dims.data(), static_cast<int>(dims.size()));
}

void Unary(const char* op, TensorView out, TensorView x, Activation act) {
  const UnaryArgs args = CheckUnary(op, out, x);
  HETKERN_LAUNCH(args.device, Activate(args, act));
}

Activation GeluKind(const char* op, const std::string& approximate) {
  HETKERN_CHECK(approximate == "none" || approximate == "tanh", ValueError)
      << "hetkern." << op << ": 'approximate' is '" << approximate
      << "'; expected 'none' or 'tanh'";
  return approximate == "tanh" ? Activation::kGeluTanh : Activation::kGelu;
}

// x: (..., 2 * d) -> out: (..., d) of the same dtype and device, no overlap;
// rows of each any stride.
GatedArgs CheckGated(const char* op, const TensorView& out, const TensorView& x) {
  const RowsView xv = CheckRowsArray(op, "x", x, 1, Access::kRead);
  const ArrayArg& xa = xv.array;
  HETKERN_CHECK(x.ndim() >= 1, ValueError)
      << "hetkern." << op << ": 'x' is 0-dimensional; expected shape (..., 2 * d)";
  const int64_t last = xv.cols;
  HETKERN_CHECK(last % 2 == 0, ValueError)
      << "hetkern." << op << ": 'x' has last dimension " << last
      << "; the last dimension must be even (gate and up halves of d each)";
  const RowsView ov = CheckRowsArray(op, "out", out, 1, Access::kWritten);
  const ArrayArg& oa = ov.array;
  CheckSameDType(op, "x", xa.dtype, "out", oa.dtype);
  CheckSameDevice(op, "x", xa.device, "out", oa.device);
  bool shape_ok = out.ndim() == x.ndim() && out.size(out.ndim() - 1) == last / 2;
  for (int i = 0; shape_ok && i + 1 < x.ndim(); ++i) shape_ok = out.size(i) == x.size(i);
  HETKERN_CHECK(shape_ok, ValueError)
      << "hetkern." << op << ": 'out' has shape " << ShapeString(out) << "; expected "
      << HalvedShapeString(x) << " (the shape of 'x' with its last dimension halved)";
  // In place is impossible (out is half the size), so any overlap is refused.
  const bool disjoint = Disjoint(FootprintOf(ov), FootprintOf(xv));
  HETKERN_CHECK(disjoint || oa.data != xa.data, ValueError)
      << "hetkern." << op << ": 'out' overlaps 'x'; expected a separate array";
  HETKERN_CHECK(disjoint, ValueError)
      << "hetkern." << op << ": 'out' partially overlaps 'x'; expected a separate array";
  const int64_t d = last / 2;
  return GatedArgs{xa.dtype, xa.device, xv.rows,      d,
                   xa.data,  oa.data,   xv.row_stride, ov.row_stride};
}

void Gated(const char* op, TensorView out, TensorView x, Activation act) {
  const GatedArgs args = CheckGated(op, out, x);
  if (args.rows == 0 || args.d == 0) return;
  HETKERN_LAUNCH(args.device, GatedActivate(args, act));
}

}  // namespace

void relu(TensorView out, TensorView x) { Unary("relu", out, x, Activation::kRelu); }
void sigmoid(TensorView out, TensorView x) { Unary("sigmoid", out, x, Activation::kSigmoid); }
void silu(TensorView out, TensorView x) { Unary("silu", out, x, Activation::kSilu); }
void tanh(TensorView out, TensorView x) { Unary("tanh", out, x, Activation::kTanh); }
void exp(TensorView out, TensorView x) { Unary("exp", out, x, Activation::kExp); }

void gelu(TensorView out, TensorView x, const std::string& approximate) {
  const Activation act = GeluKind("gelu", approximate);
  Unary("gelu", out, x, act);
}

void silu_and_mul(TensorView out, TensorView x) {
  Gated("silu_and_mul", out, x, Activation::kSilu);
}

void gelu_and_mul(TensorView out, TensorView x, const std::string& approximate) {
  const Activation act = GeluKind("gelu_and_mul", approximate);
  Gated("gelu_and_mul", out, x, act);
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(relu, hetkern::relu);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sigmoid, hetkern::sigmoid);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(silu, hetkern::silu);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gelu, hetkern::gelu);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tanh, hetkern::tanh);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(exp, hetkern::exp);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(silu_and_mul, hetkern::silu_and_mul);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gelu_and_mul, hetkern::gelu_and_mul);
