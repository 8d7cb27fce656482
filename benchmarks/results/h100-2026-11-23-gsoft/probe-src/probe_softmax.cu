// Probe: the library's softmax kernels, launched through their launchers or
// with chosen shapes (same TU as src/cuda/softmax.cu).
#include "src/cuda/softmax.cu"

namespace hetkern { namespace cuda {
// variant: 0 = library dispatch, 1 = register kernel, 2 = shared kernel, 3 = cluster
void ProbeSoftmax(int variant, const void* x, void* out, int64_t rows, int64_t cols, bool log) {
  SoftmaxArgs a{};
  a.dtype = DType::kBFloat16;
  a.device = DLDevice{kDLCUDA, 0};
  a.rows = rows; a.cols = cols; a.x = x; a.out = out; a.log = log; a.x_stride = cols; a.out_stride = cols;
  if (variant == 0) return Softmax(a);
  using T = __nv_bfloat16;
  constexpr int kVec = 8;
  DeviceScope scope(a.device);
  const T* xt = static_cast<const T*>(x);
  T* ot = static_cast<T*>(out);
  const int64_t packs = cols / kVec;
  if (variant == 1) {
    LaunchRegisterRows<T, kVec>(scope, xt, ot, rows, cols, cols, cols, log);
  } else if (variant == 2) {
    LaunchSharedRows<T, kVec>(scope, PickSharedRowShape(scope, rows, packs), xt, ot, rows, cols, cols, cols, log);
  } else if (variant >= 10) {  // shared kernel with a forced block size 10: 256, 11: 512, 12: 1024
    const int threads = 256 << (variant - 10);
    SharedRowShape sh;
    sh.threads = threads;
    sh.slots = static_cast<int>((packs + threads - 1) / threads - kSharedRowRegPacks);
    const int64_t bytes = int64_t{sh.slots} * threads * 16 + 1024;
    sh.blocks_per_sm = static_cast<int>(std::min<int64_t>(scope.SharedMemoryPerSm() / bytes, 1024 / threads));
    LaunchSharedRows<T, kVec>(scope, sh, xt, ot, rows, cols, cols, cols, log);
  } else if (variant == 3) {
    LaunchClusterRows<T, kVec>(scope, PickClusterShape(packs), xt, ot, rows, cols, cols, cols, log);
  }
  CheckLaunch();
}
}}
