#include "src/cuda/activation.cu"

namespace hetkern { namespace cuda {
// variant: 0 library; 1: <4 lanes,1>; 2: <8,1>; 3: <8,2>; 4: <8,4>; 5: <2,1>
void ProbeGated(int variant, bool gelu, const void* x, void* out, int64_t rows, int64_t d) {
  GatedArgs a{};
  a.dtype = DType::kBFloat16;
  a.device = DLDevice{kDLCUDA, 0};
  a.rows = rows; a.d = d; a.x = x; a.out = out; a.x_stride = 2 * d; a.out_stride = d;
  if (variant == 0) return GatedActivate(a, gelu ? Activation::kGelu : Activation::kSilu);
  using T = __nv_bfloat16;
  DeviceScope scope(a.device);
  const auto go = [&](auto op) {
    switch (variant) {
      case 1: LaunchGated<T, 4, 1>(a, scope, op); break;
      case 2: LaunchGated<T, 8, 1>(a, scope, op); break;
      case 3: LaunchGated<T, 8, 2>(a, scope, op); break;
      case 4: LaunchGated<T, 8, 4>(a, scope, op); break;
      case 5: LaunchGated<T, 2, 1>(a, scope, op); break;
    }
  };
  if (gelu) go(ActivationOp<float, Activation::kGelu, true>{}); else go(ActivationOp<float, Activation::kSilu, true>{});
  CheckLaunch();
}
}}
