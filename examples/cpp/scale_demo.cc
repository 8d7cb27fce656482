// A C++ program that uses hetkern without Python: it wraps memory it owns in
// DLTensors, calls hetkern::scale, handles a bad call, and checks that
// hetkern::CudaStreamGuard sets and restores the CUDA stream of this thread.
//
// Build against an installed hetkern (see README and this directory's
// CMakeLists.txt and meson.build):
//   export PKG_CONFIG_PATH=$(python -m hetkern --pkgconfigdir)
//   c++ -std=c++17 -O2 scale_demo.cc $(pkg-config --cflags --libs hetkern) -o scale_demo
#include <hetkern/hetkern.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

// A 1-D float32 DLTensor over `data` (no ownership taken).
DLTensor View1D(std::vector<float>& data, int64_t* shape) {
  *shape = static_cast<int64_t>(data.size());
  DLTensor t{};
  t.data = data.data();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = nullptr;  // contiguous
  t.byte_offset = 0;
  return t;
}

}  // namespace

int main() {
  std::printf("hetkern %s, CPU target %s, CUDA %s\n", hetkern::version().c_str(),
              hetkern::cpu_target().c_str(), hetkern::built_with_cuda() ? "built" : "not built");

  std::vector<float> x(1000), y(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
  int64_t x_shape, y_shape;
  DLTensor x_t = View1D(x, &x_shape), y_t = View1D(y, &y_shape);

  hetkern::scale(&y_t, &x_t, 4.0);
  for (size_t i = 0; i < x.size(); ++i) {
    if (y[i] != x[i] * 4.0f) {
      std::printf("wrong result at %zu: %g\n", i, y[i]);
      return 1;
    }
  }
  std::printf("scale: y[999] = %g (expected %g)\n", y[999], x[999] * 4.0f);

  // Bad arguments throw tvm::ffi::Error before anything is written.
  std::vector<float> small(3, -1.0f);
  int64_t small_shape;
  DLTensor small_t = View1D(small, &small_shape);
  try {
    hetkern::scale(&small_t, &x_t, 4.0);
    std::printf("expected an error for mismatched shapes\n");
    return 1;
  } catch (const tvm::ffi::Error& e) {
    std::printf("rejected as expected: %s: %s\n", e.kind().c_str(), e.message().c_str());
  }
  if (small[0] != -1.0f) return 1;

  // The stream guard: calls on CUDA device 0 in its scope go to `stream`
  // (any handle works here: no CUDA call is made), then the old one is back.
  void* const before = hetkern::current_cuda_stream(0);
  int marker = 0;
  void* const stream = &marker;
  {
    hetkern::CudaStreamGuard on_stream(0, stream);
    if (hetkern::current_cuda_stream(0) != stream || hetkern::current_cuda_stream(1) != nullptr) {
      std::printf("CudaStreamGuard did not set the stream of device 0 only\n");
      return 1;
    }
  }
  if (hetkern::current_cuda_stream(0) != before) {
    std::printf("CudaStreamGuard did not restore the stream\n");
    return 1;
  }
  std::printf("stream guard: set and restored\n");
  return 0;
}
