// Entries of softmax and log_softmax over the last dimension: validate once,
// then run the kernel pair on the arguments' device.
#include <tvm/ffi/function.h>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

// The elementwise checks (dtype, device, contiguity, same layout, no partial
// overlap), plus the row shape: rows of the last dimension's length; a 0-d
// array is one row of one element, as in torch.softmax(x, -1).
SoftmaxArgs CheckSoftmax(const char* op, const TensorView& out, const TensorView& x, bool log) {
  const UnaryArgs u = CheckUnary(op, out, x);
  const RowShape shape = LastDimRows(x);
  return SoftmaxArgs{u.dtype, u.device, shape.rows, shape.cols, u.x, u.out, log};
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
