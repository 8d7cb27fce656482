// Entries of the elementwise ops: validate once, then run the kernel pair on
// the arguments' device.
#include <tvm/ffi/any.h>
#include <tvm/ffi/function.h>

#include <cstdint>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

// `out` is `in` itself (same start, same bytes: safe elementwise in place) or
// does not overlap it at all. Unlike CheckNoPartialOverlap this also refuses a
// shared start when the sizes differ (a broadcast y, a cast to another width),
// where writing out[i] would change an input element that is still to be read.
void CheckSameOrDisjoint(const char* op, const ArrayArg& out, const char* in_name,
                         const ArrayArg& in) {
  const auto out_begin = reinterpret_cast<uintptr_t>(out.data);
  const auto in_begin = reinterpret_cast<uintptr_t>(in.data);
  const uintptr_t out_end = out_begin + out.numel * DTypeSizeOf(out.dtype);
  const uintptr_t in_end = in_begin + in.numel * DTypeSizeOf(in.dtype);
  const bool same = out_begin == in_begin && out_end == in_end && out.dtype == in.dtype;
  const bool disjoint = out_end <= in_begin || in_end <= out_begin || out.numel == 0 || in.numel == 0;
  HETKERN_CHECK(same || disjoint, ValueError)
      << "hetkern." << op << ": 'out' partially overlaps '" << in_name
      << "'; pass the same array for in-place use or a non-overlapping one";
}

// The checks of out = f(x, y) with y of x's shape, a trailing part of it
// ((D,) for an (N, D) x), or one element (shape (1,) or ()).
BinaryArgs CheckBinary(const char* op, const TensorView& out, const TensorView& x,
                       const TensorView& y) {
  const ArrayArg xa = CheckArray(op, "x", x);
  const ArrayArg ya = CheckArray(op, "y", y);
  HETKERN_CHECK(ya.dtype == xa.dtype, ValueError)
      << "hetkern." << op << ": 'y' has dtype " << DTypeName(ya.dtype) << "; expected "
      << DTypeName(xa.dtype) << " like 'x' (no type promotion)";
  CheckSameDevice(op, "x", xa.device, "y", ya.device);
  bool trailing = y.ndim() <= x.ndim();
  for (int i = 1; trailing && i <= y.ndim(); ++i) {
    trailing = y.size(y.ndim() - i) == x.size(x.ndim() - i);
  }
  const bool one_element = y.ndim() == 1 && y.size(0) == 1;
  HETKERN_CHECK(trailing || one_element, ValueError)
      << "hetkern." << op << ": 'y' has shape " << ShapeString(y) << "; expected the shape of 'x' "
      << ShapeString(x) << ", a trailing part of it, (1,) or ()";
  CheckSameLayout(op, "x", x, "out", out);
  const ArrayArg oa = CheckArray(op, "out", out);
  CheckSameOrDisjoint(op, oa, "x", xa);
  CheckSameOrDisjoint(op, oa, "y", ya);
  return BinaryArgs{xa.dtype, xa.device, xa.numel, xa.data, ya.data, ya.numel, oa.data};
}

void BinaryWithArray(const char* op, BinaryOp kind, TensorView out, TensorView x, TensorView y) {
  const BinaryArgs args = CheckBinary(op, out, x, y);
  HETKERN_LAUNCH(args.device, Binary(args, kind));
}

void BinaryWithNumber(const char* op, BinaryOp kind, TensorView out, TensorView x, double y) {
  const UnaryArgs args = CheckUnary(op, out, x);
  HETKERN_LAUNCH(args.device, BinaryScalar(args, kind, y));
}

const char* BinaryOpName(BinaryOp kind) {
  switch (kind) {
    case BinaryOp::kAdd:
      return "add";
    case BinaryOp::kSub:
      return "sub";
    case BinaryOp::kMul:
      return "mul";
    case BinaryOp::kDiv:
      return "div";
  }
  return "?";
}

// The exported entry of a binary op: y is an array or a number.
template <BinaryOp kKind>
void BinaryEntry(TensorView out, TensorView x, tvm::ffi::AnyView y) {
  const char* op = BinaryOpName(kKind);
  if (auto y_array = y.try_cast<TensorView>()) return BinaryWithArray(op, kKind, out, x, *y_array);
  if (auto y_number = y.try_cast<double>()) return BinaryWithNumber(op, kKind, out, x, *y_number);
  TVM_FFI_THROW(TypeError) << "hetkern." << op << ": 'y' must be an array or a real number; got "
                           << y.GetTypeKey();
}

}  // namespace

void scale(TensorView out, TensorView x, double factor) {
  const UnaryArgs args = CheckUnary("scale", out, x);
  HETKERN_LAUNCH(args.device, Scale(args, factor));
}

void add(TensorView out, TensorView x, TensorView y) {
  BinaryWithArray("add", BinaryOp::kAdd, out, x, y);
}
void add(TensorView out, TensorView x, double y) {
  BinaryWithNumber("add", BinaryOp::kAdd, out, x, y);
}
void sub(TensorView out, TensorView x, TensorView y) {
  BinaryWithArray("sub", BinaryOp::kSub, out, x, y);
}
void sub(TensorView out, TensorView x, double y) {
  BinaryWithNumber("sub", BinaryOp::kSub, out, x, y);
}
void mul(TensorView out, TensorView x, TensorView y) {
  BinaryWithArray("mul", BinaryOp::kMul, out, x, y);
}
void mul(TensorView out, TensorView x, double y) {
  BinaryWithNumber("mul", BinaryOp::kMul, out, x, y);
}
void div(TensorView out, TensorView x, TensorView y) {
  BinaryWithArray("div", BinaryOp::kDiv, out, x, y);
}
void div(TensorView out, TensorView x, double y) {
  BinaryWithNumber("div", BinaryOp::kDiv, out, x, y);
}

void axpby(TensorView out, TensorView x, TensorView y, double a, double b) {
  const BinaryArgs args = CheckBinary("axpby", out, x, y);
  HETKERN_LAUNCH(args.device, Axpby(args, a, b));
}

void cast(TensorView out, TensorView x) {
  const ArrayArg xa = CheckArray("cast", "x", x);
  const ArrayArg oa = CheckArray("cast", "out", out);
  CheckSameDevice("cast", "x", xa.device, "out", oa.device);
  bool same_shape = out.ndim() == x.ndim();
  for (int i = 0; same_shape && i < x.ndim(); ++i) same_shape = out.size(i) == x.size(i);
  HETKERN_CHECK(same_shape, ValueError)
      << "hetkern.cast: 'out' has shape " << ShapeString(out) << "; expected " << ShapeString(x)
      << " like 'x'";
  CheckSameOrDisjoint("cast", oa, "x", xa);
  const CastArgs args{xa.dtype, oa.dtype, xa.device, xa.numel, xa.data, oa.data};
  HETKERN_LAUNCH(args.device, Cast(args));
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale, hetkern::scale);

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, hetkern::BinaryEntry<hetkern::BinaryOp::kAdd>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sub, hetkern::BinaryEntry<hetkern::BinaryOp::kSub>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(mul, hetkern::BinaryEntry<hetkern::BinaryOp::kMul>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(div, hetkern::BinaryEntry<hetkern::BinaryOp::kDiv>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(axpby, hetkern::axpby);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(cast, hetkern::cast);
