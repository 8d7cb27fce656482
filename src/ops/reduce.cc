// Entries of the reductions: validate every argument, then run the kernel
// pair on the arguments' device.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

using tvm::ffi::Optional;

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
  const RowShape shape = whole ? RowShape{1, xa.numel} : LastDimRows(x);
  const int64_t rows = shape.rows, cols = shape.cols;

  const ArrayArg oa = CheckArray(op, "out", out);
  CheckSameDType(op, "x", xa.dtype, "out", oa.dtype);
  CheckSameDevice(op, "x", xa.device, "out", oa.device);
  const int out_ndim = whole ? 0 : std::max(ndim - 1, 0);
  bool shape_ok = out.ndim() == out_ndim;
  for (int i = 0; shape_ok && i < out_ndim; ++i) shape_ok = out.size(i) == x.size(i);
  HETKERN_CHECK(shape_ok, ValueError)
      << "hetkern." << op << ": 'out' has shape " << ShapeString(out) << "; expected "
      << (whole || ndim == 0 ? std::string("()") : ShapeString(x.shape().data(), ndim - 1))
      << (whole ? " (axis=None reduces the whole array)" : " (x.shape[:-1])");

  HETKERN_CHECK(kind != ReduceOp::kMax || cols > 0, ValueError)
      << "hetkern." << op << ": 'x' has shape " << ShapeString(x) << ", so "
      << (whole ? "the array is empty" : "its rows are empty")
      << "; max of an empty row is undefined";

  // A reduction writes each output after reading its row, while other
  // threads or blocks still read theirs: out cannot share memory with inputs.
  CheckDisjoint(op, "out", out, "x", x);
  if (y != nullptr) CheckDisjoint(op, "out", out, "y", *y);

  double* scratch_data = nullptr;
  const int64_t scratch_needed =
      xa.device.device_type == kDLCUDA ? ReduceScratchNumel(rows, cols) : 0;
  if (scratch.has_value()) {
    const ArrayArg sa = CheckArray(op, "scratch", *scratch);
    HETKERN_CHECK(sa.dtype == DType::kFloat64 && SameDevice(sa.device, xa.device) &&
                      sa.numel >= scratch_needed,
                  ValueError)
        << "hetkern." << op << ": 'scratch' is a " << DTypeName(sa.dtype) << " array of "
        << sa.numel << " elements on " << DeviceString(sa.device) << "; expected float64 with at least "
        << scratch_needed << " elements on " << DeviceString(xa.device);
    CheckDisjoint(op, "scratch", *scratch, "x", x);
    if (y != nullptr) CheckDisjoint(op, "scratch", *scratch, "y", *y);
    CheckDisjoint(op, "scratch", *scratch, "out", out);
    scratch_data = static_cast<double*>(sa.data);
  } else {
    // Without one, the scratch comes from the caller's framework allocator
    // (torch's caching allocator, on the caller's stream: no host sync, CUDA
    // graph capture works) when the framework installed one for this call.
    HETKERN_CHECK(scratch_needed == 0 || TVMFFIEnvGetDLPackManagedTensorAllocator() != nullptr,
                  ValueError)
        << "hetkern." << op << ": 'scratch' is required for rows longer than " << kReduceCudaChunk
        << " elements on CUDA; expected a float64 array of at least " << scratch_needed
        << " elements on " << DeviceString(xa.device);
  }
  return ReduceArgs{xa.dtype, xa.device, rows,  cols,
                    xa.data,  ya.data,   oa.data, scratch_data};
}

// Scratch the CUDA kernels need and the caller did not pass (see CheckReduce).
Optional<tvm::ffi::Tensor> AllocateScratch(ReduceArgs& args) {
  const int64_t needed =
      args.device.device_type == kDLCUDA ? ReduceScratchNumel(args.rows, args.cols) : 0;
  if (args.scratch != nullptr || needed == 0) return std::nullopt;
  tvm::ffi::Tensor scratch = tvm::ffi::Tensor::FromEnvAlloc(
      TVMFFIEnvTensorAlloc, {needed}, DLDataType{kDLFloat, 64, 1}, args.device);
  args.scratch = static_cast<double*>(scratch.data_ptr());
  return scratch;
}

void RunReduce(const char* op, ReduceOp kind, const TensorView& out, const TensorView& x,
               const TensorView* y, const Optional<int64_t>& axis,
               const Optional<TensorView>& scratch) {
  ReduceArgs args = CheckReduce(op, kind, out, x, y, axis, scratch);
  const Optional<tvm::ffi::Tensor> owned_scratch = AllocateScratch(args);  // lives past the launch
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
