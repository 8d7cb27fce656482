// Entries of softmax and log_softmax over the last dimension: validate once,
// then run the kernel pair on the arguments' device.
#include <tvm/ffi/function.h>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

// Rows of the last dimension's length, each contiguous, any row stride (x
// and out each their own); a 0-d array is one row of one element, as in
// torch.softmax(x, -1). out has x's shape, dtype and device and is x itself
// or disjoint from it.
SoftmaxArgs CheckSoftmax(const char* op, const TensorView& out, const TensorView& x, bool log) {
  const RowsView xv = CheckRowsArray(op, "x", x, 1, Access::kRead);
  CheckSameLayout(op, "x", x, "out", out);
  const RowsView ov = CheckRowsArray(op, "out", out, 1, Access::kWritten);
  CheckSameOrDisjoint(op, "out", ov, "x", xv);
  return SoftmaxArgs{xv.array.dtype, xv.array.device, xv.rows,         xv.cols,
                     xv.array.data,  ov.array.data,   log,             xv.row_stride,
                     ov.row_stride};
}

void RunSoftmax(const char* op, const TensorView& out, const TensorView& x, bool log) {
  const SoftmaxArgs args = CheckSoftmax(op, out, x, log);
  if (args.rows == 0 || args.cols == 0) return;
  HETKERN_LAUNCH(args.device, Softmax(args));
}

}  // namespace

void softmax(TensorView out, TensorView x) { RunSoftmax("softmax", out, x, /*log=*/false); }

void log_softmax(TensorView out, TensorView x) {
  RunSoftmax("log_softmax", out, x, /*log=*/true);
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(softmax, hetkern::softmax);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(log_softmax, hetkern::log_softmax);
