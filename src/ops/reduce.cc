// Entries of the reductions: validate every argument, then run the kernel
// pair on the arguments' device.
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

using tvm::ffi::Optional;

// "(2, 3)" for the shape of `t` without its last `drop` dimensions.
std::string ShapeOf(const TensorView& t, int drop = 0) {
  std::ostringstream os;
  const int ndim = t.ndim() - drop;
  os << '(';
  for (int i = 0; i < ndim; ++i) os << (i ? ", " : "") << t.size(i);
  os << (ndim == 1 ? ",)" : ")");
  return os.str();
}

std::string DeviceOf(DLDevice d) {
  return d.device_type == kDLCUDA ? "cuda:" + std::to_string(d.device_id) : "cpu";
}

bool SameDevice(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

// Whether the bytes of a and b intersect.
bool Overlap(const ArrayArg& a, const ArrayArg& b) {
  if (a.numel == 0 || b.numel == 0) return false;
  const auto a_begin = reinterpret_cast<uintptr_t>(a.data);
  const auto b_begin = reinterpret_cast<uintptr_t>(b.data);
  return a_begin < b_begin + b.numel * DTypeSizeOf(b.dtype) &&
         b_begin < a_begin + a.numel * DTypeSizeOf(a.dtype);
}

// A reduction writes each output after reading its row, while other
// threads or blocks still read theirs: out must not share memory with inputs.
void CheckDisjoint(const char* op, const char* a_name, const ArrayArg& a, const char* b_name,
                   const ArrayArg& b) {
  HETKERN_CHECK(!Overlap(a, b), ValueError)
      << "hetkern." << op << ": '" << a_name << "' overlaps '" << b_name
      << "'; a reduction cannot run in place, pass a separate array";
}

// Every check of a reduction; y is dot's second operand, else nullptr.
ReduceArgs CheckReduce(const char* op, ReduceOp kind, const TensorView& out, const TensorView& x,
                       const TensorView* y, const Optional<int64_t>& axis,
                       const Optional<TensorView>& scratch) {
  const ArrayArg xa = CheckArray(op, "x", x);
  ArrayArg ya{};
  if (y != nullptr) {
    CheckSameLayout(op, "x", x, "y", *y);
    ya = CheckArray(op, "y", *y);
  }

  const bool whole = !axis.has_value();
  const int ndim = x.ndim();
  if (!whole) {
    const int64_t a = *axis;
    HETKERN_CHECK(a == -1 || a == ndim - 1, ValueError)
        << "hetkern." << op << ": 'axis' is " << a << "; expected -1 (the last dimension"
        << (ndim > 1 ? ", also " + std::to_string(ndim - 1) : std::string()) << ") or None (the "
        << "whole array)";
  }
  int64_t rows = 1, cols = xa.numel;
  if (!whole && ndim > 0) {
    cols = x.size(ndim - 1);
    for (int i = 0; i + 1 < ndim; ++i) rows *= x.size(i);
  }

  const ArrayArg oa = CheckArray(op, "out", out);
  HETKERN_CHECK(oa.dtype == xa.dtype, ValueError)
      << "hetkern." << op << ": 'out' has dtype " << DTypeName(oa.dtype) << "; expected "
      << DTypeName(xa.dtype) << " like 'x'";
  HETKERN_CHECK(SameDevice(oa.device, xa.device), ValueError)
      << "hetkern." << op << ": 'out' is on " << DeviceOf(oa.device) << "; expected "
      << DeviceOf(xa.device) << " like 'x'";
  const int out_ndim = whole ? 0 : std::max(ndim - 1, 0);
  bool shape_ok = out.ndim() == out_ndim;
  for (int i = 0; shape_ok && i < out_ndim; ++i) shape_ok = out.size(i) == x.size(i);
  HETKERN_CHECK(shape_ok, ValueError)
      << "hetkern." << op << ": 'out' has shape " << ShapeOf(out) << "; expected "
      << (whole || ndim == 0 ? std::string("()") : ShapeOf(x, 1))
      << (whole ? " (axis=None reduces the whole array)" : " (x.shape[:-1])");

  HETKERN_CHECK(kind != ReduceOp::kMax || cols > 0, ValueError)
      << "hetkern." << op << ": 'x' has shape " << ShapeOf(x) << ", so "
      << (whole ? "the array is empty" : "its rows are empty")
      << "; max of an empty row is undefined";

  CheckDisjoint(op, "out", oa, "x", xa);
  if (y != nullptr) CheckDisjoint(op, "out", oa, "y", ya);

  double* scratch_data = nullptr;
  const int64_t scratch_needed =
      xa.device.device_type == kDLCUDA ? ReduceScratchNumel(rows, cols) : 0;
  if (scratch.has_value()) {
    const ArrayArg sa = CheckArray(op, "scratch", *scratch);
    HETKERN_CHECK(sa.dtype == DType::kFloat64 && SameDevice(sa.device, xa.device) &&
                      sa.numel >= scratch_needed,
                  ValueError)
        << "hetkern." << op << ": 'scratch' is a " << DTypeName(sa.dtype) << " array of "
        << sa.numel << " elements on " << DeviceOf(sa.device) << "; expected float64 with at least "
        << scratch_needed << " elements on " << DeviceOf(xa.device);
    CheckDisjoint(op, "scratch", sa, "x", xa);
    if (y != nullptr) CheckDisjoint(op, "scratch", sa, "y", ya);
    CheckDisjoint(op, "scratch", sa, "out", oa);
    scratch_data = static_cast<double*>(sa.data);
  } else {
    HETKERN_CHECK(scratch_needed == 0, ValueError)
        << "hetkern." << op << ": 'scratch' is required for rows longer than " << kReduceCudaChunk
        << " elements on CUDA; expected a float64 array of at least " << scratch_needed
        << " elements on " << DeviceOf(xa.device);
  }
  return ReduceArgs{xa.dtype, xa.device, rows,  cols,
                    xa.data,  ya.data,   oa.data, scratch_data};
}

void RunReduce(const char* op, ReduceOp kind, const TensorView& out, const TensorView& x,
               const TensorView* y, const Optional<int64_t>& axis,
               const Optional<TensorView>& scratch) {
  const ReduceArgs args = CheckReduce(op, kind, out, x, y, axis, scratch);
  HETKERN_LAUNCH(args.device, Reduce(args, kind));
}

}  // namespace

void sum(TensorView out, TensorView x, Optional<int64_t> axis, Optional<TensorView> scratch) {
  RunReduce("sum", ReduceOp::kSum, out, x, nullptr, axis, scratch);
}

void max(TensorView out, TensorView x, Optional<int64_t> axis, Optional<TensorView> scratch) {
  RunReduce("max", ReduceOp::kMax, out, x, nullptr, axis, scratch);
}

void dot(TensorView out, TensorView x, TensorView y, Optional<int64_t> axis,
         Optional<TensorView> scratch) {
  RunReduce("dot", ReduceOp::kDot, out, x, &y, axis, scratch);
}

void norm(TensorView out, TensorView x, Optional<int64_t> axis, Optional<TensorView> scratch) {
  RunReduce("norm", ReduceOp::kNorm, out, x, nullptr, axis, scratch);
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum, hetkern::sum);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(max, hetkern::max);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dot, hetkern::dot);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(norm, hetkern::norm);
