// Softmax row kernels of src/cuda/softmax.cu launched directly at the shapes
// where Liger led (4096x32000, 16384x16384, 8192x12288 bfloat16), in every
// launch shape that holds the row, to see which the dispatcher should pick.
// Device time per call: 20 launches back to back in a CUDA graph, replayed.
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90a -I. -I$TVM_INC \
//     softmax_probe.cu src/cuda/common.cu -L$TVM_LIB -ltvm_ffi -o probe
#include "src/cuda/softmax.cu"

#include <cstdio>
#include <vector>

using namespace hetkern::cuda;
using bf16 = __nv_bfloat16;

template <class Launch>
float GraphTime(Launch launch) {
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (int i = 0; i < 3; ++i) launch(s);
  cudaStreamSynchronize(s);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < 20; ++i) launch(s);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&ge, g, 0);
  cudaGraphLaunch(ge, s);
  cudaStreamSynchronize(s);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(a, s);
    cudaGraphLaunch(ge, s);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    best = std::min(best, ms * 1000.f / 20);
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) printf("  error %s\n", cudaGetErrorString(e));
  return best;
}

int sms;

template <int kGroup, int kPacks, bool kLog>
void Register(const char* what, const bf16* x, bf16* y, long rows, long cols, bool grid_rows) {
  constexpr int kBlock = RowBlockThreads<kGroup>();
  const long tiles = (rows + kBlock / kGroup - 1) / (kBlock / kGroup);
  const int blocks = grid_rows ? (int)tiles : (int)std::min<long>(tiles, 16L * sms);
  const float us = GraphTime([&](cudaStream_t s) {
    RegisterRowsKernel<bf16, 8, kGroup, kPacks, kLog><<<blocks, kBlock, 0, s>>>(x, y, rows, cols, cols, cols);
  });
  printf("%-12s %ldx%ld register %4d threads x %d packs, grid %6d: %8.2f us  %.2f TB/s\n",
         kLog ? "log_softmax" : "softmax", rows, cols, kGroup, kPacks, blocks, us, 4.0 * rows * cols / us / 1e6);
}

template <int kThreads, bool kLog>
void Shared(const bf16* x, bf16* y, long rows, long cols, int blocks_per_sm_cap) {
  const long packs = cols / 8;
  const int per_thread = (int)((packs + kThreads - 1) / kThreads);
  const int slots = per_thread - kSharedRowRegPacks;
  if (slots < 1) return;
  const int bytes = slots * kThreads * 16;
  int smem_sm;
  cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0);
  const int by_mem = smem_sm / (bytes + 1024);
  const int per_sm = std::min({by_mem, 1024 / kThreads, blocks_per_sm_cap});
  const int blocks = (int)std::min<long>(rows, (long)per_sm * sms);
  auto kernel = SharedRowsKernel<bf16, 8, kThreads, kLog>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  const float us = GraphTime([&](cudaStream_t s) {
    kernel<<<blocks, kThreads, bytes, s>>>(x, y, rows, cols, cols, cols, slots);
  });
  printf("%-12s %ldx%ld shared   %4d threads, %2d slots, %d/SM:      %8.2f us  %.2f TB/s\n",
         kLog ? "log_softmax" : "softmax", rows, cols, kThreads, slots, per_sm, us, 4.0 * rows * cols / us / 1e6);
}

int main() {
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const long max_elems = 16384L * 16384;
  bf16 *x, *y;
  cudaMalloc(&x, max_elems * 2);
  cudaMalloc(&y, max_elems * 2);
  std::vector<bf16> h(max_elems);
  for (long i = 0; i < max_elems; ++i) h[i] = __float2bfloat16((float)((i * 2654435761u) % 1000) / 100.f - 5.f);
  cudaMemcpy(x, h.data(), max_elems * 2, cudaMemcpyHostToDevice);
  {
    const float us = GraphTime([&](cudaStream_t s) { cudaMemcpyAsync(y, x, 4096L * 32000 * 2, cudaMemcpyDeviceToDevice, s); });
    printf("copy 4096x32000 bf16: %.2f us  %.2f TB/s\n", us, 4.0 * 4096 * 32000 / us / 1e6);
  }
  for (bool log : {false, true}) {
    const long r = 4096, c = 32000;
    if (!log) {
      Shared<256, false>(x, y, r, c, 4); Shared<256, false>(x, y, r, c, 3); Shared<512, false>(x, y, r, c, 2);
      Register<1024, 4, false>("", x, y, r, c, false); Register<1024, 4, false>("", x, y, r, c, true);
    } else {
      Shared<256, true>(x, y, r, c, 4); Shared<512, true>(x, y, r, c, 2);
      Register<1024, 4, true>("", x, y, r, c, false); Register<1024, 4, true>("", x, y, r, c, true);
    }
  }
  for (long c : {16384L, 12288L}) {
    const long r = max_elems / c;
    Register<512, 4, false>("", x, y, r, c, false); Register<512, 4, false>("", x, y, r, c, true);
    Register<1024, 2, false>("", x, y, r, c, false); Register<1024, 2, false>("", x, y, r, c, true);
    Shared<256, false>(x, y, r, c, 4); Shared<256, false>(x, y, r, c, 3);
    Register<512, 4, true>("", x, y, r, c, false); Register<1024, 2, true>("", x, y, r, c, true);
    Shared<256, true>(x, y, r, c, 4);
  }
  printf("status: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
