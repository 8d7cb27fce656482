// hetkern from C++ on CUDA streams the caller owns: hetkern::CudaStreamGuard
// puts each call on the caller's stream. Two streams scale two arrays; then a
// call under the guard is captured into a CUDA graph on one stream (which
// works only if the kernel really launches on that stream) and replayed.
// Built by this directory's CMakeLists.txt / meson.build when CUDA is found.
#include <cuda_runtime.h>
#include <hetkern/hetkern.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#define CHECK_CUDA(expr)                                                               \
  do {                                                                                 \
    cudaError_t err_ = (expr);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      std::printf("%s failed: %s\n", #expr, cudaGetErrorString(err_));                 \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

namespace {

DLTensor CudaView1D(float* data, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCUDA, 0};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

bool AllEqual(const std::vector<float>& v, float expected) {
  for (float f : v) {
    if (f != expected) return false;
  }
  return true;
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || !hetkern::built_with_cuda()) {
    std::printf("skipped: needs a CUDA GPU and a CUDA build of hetkern\n");
    return 0;
  }
  int64_t n = 1 << 24;
  std::vector<float> host(n, 1.5f);
  float *a, *b, *out_a, *out_b;
  for (float** p : {&a, &b, &out_a, &out_b}) CHECK_CUDA(cudaMalloc(p, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(a, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  DLTensor a_t = CudaView1D(a, &n), b_t = CudaView1D(b, &n);
  DLTensor out_a_t = CudaView1D(out_a, &n), out_b_t = CudaView1D(out_b, &n);

  cudaStream_t s1, s2;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  // 1. One call per stream, each under its own guard; both run asynchronously.
  {
    hetkern::CudaStreamGuard on_s1(0, s1);
    hetkern::scale(&out_a_t, &a_t, 2.0);
  }
  {
    hetkern::CudaStreamGuard on_s2(0, s2);
    hetkern::scale(&out_b_t, &b_t, 4.0);
  }
  CHECK_CUDA(cudaStreamSynchronize(s1));
  CHECK_CUDA(cudaStreamSynchronize(s2));
  std::vector<float> ra(n), rb(n);
  CHECK_CUDA(cudaMemcpy(ra.data(), out_a, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(rb.data(), out_b, n * sizeof(float), cudaMemcpyDeviceToHost));
  if (!AllEqual(ra, 3.0f) || !AllEqual(rb, 6.0f)) {
    std::printf("wrong results on the two streams\n");
    return 1;
  }
  std::printf("two streams: out_a = %g, out_b = %g on %lld elements each\n", ra[0], rb[0],
              static_cast<long long>(n));

  // 2. Stream capture on s1 (global mode: a launch on any other stream, the
  //    legacy default stream included, would fail the capture).
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  {
    hetkern::CudaStreamGuard on_s1(0, s1);
    hetkern::scale(&out_a_t, &a_t, 8.0);
  }
  CHECK_CUDA(cudaStreamEndCapture(s1, &graph));
  size_t nodes = 0;
  CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphLaunch(exec, s2));
  CHECK_CUDA(cudaStreamSynchronize(s2));
  CHECK_CUDA(cudaMemcpy(ra.data(), out_a, n * sizeof(float), cudaMemcpyDeviceToHost));
  if (!AllEqual(ra, 12.0f) || nodes == 0) {
    std::printf("graph replay gave %g (%zu nodes)\n", ra[0], nodes);
    return 1;
  }
  std::printf("captured on s1 (%zu graph node(s)), replayed on s2: out_a = %g\n", nodes, ra[0]);
  std::printf("stream of device 0 after the guards: %s\n",
              hetkern::current_cuda_stream(0) == nullptr ? "default (restored)" : "NOT restored");

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  for (float* p : {a, b, out_a, out_b}) cudaFree(p);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  return hetkern::current_cuda_stream(0) == nullptr ? 0 : 1;
}
