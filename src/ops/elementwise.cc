// Entries of the elementwise ops: validate once, then run the kernel pair on
// the arguments' device.
#include <tvm/ffi/function.h>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {

void scale(TensorView out, TensorView x, double factor) {
  const UnaryArgs args = CheckUnary("scale", out, x);
  HETKERN_LAUNCH(args.device, Scale(args, factor));
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale, hetkern::scale);
