// Graph-replay timing of kernel variants (20 calls per graph, CUDA events),
// as hetkern.bench.harness.time_cuda_graph does.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace hetkern { namespace cuda {
void ProbeSoftmax(int variant, const void* x, void* out, int64_t rows, int64_t cols, bool log);
void ProbeGated(int variant, bool gelu, const void* x, void* out, int64_t rows, int64_t d);
void ProbeScale(int variant, const float* x, float* out, int64_t n);
}}
using namespace hetkern::cuda;

#define CK(e) do { cudaError_t err_ = (e); if (err_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); exit(1); } } while (0)

static cudaStream_t g_stream;

// Median device time per call in us, or -1 if the launch failed.
double TimeGraph(const std::function<void()>& fn, double budget_ms = 150) {
  try {
    fn();
    CK(cudaStreamSynchronize(g_stream));
  } catch (const std::exception& e) {
    printf("   (failed: %.80s)\n", e.what());
    cudaGetLastError();
    return -1;
  }
  constexpr int kCalls = 20;
  cudaGraph_t graph;
  CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kCalls; ++i) fn();
  CK(cudaStreamEndCapture(g_stream, &graph));
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaGraphLaunch(exec, g_stream));
  CK(cudaEventRecord(a, g_stream));
  CK(cudaGraphLaunch(exec, g_stream));
  CK(cudaEventRecord(b, g_stream));
  CK(cudaEventSynchronize(b));
  float one_ms;
  CK(cudaEventElapsedTime(&one_ms, a, b));
  int batch = std::max(1, std::min(200, static_cast<int>(2.0 / std::max(one_ms, 1e-3f))));  // ~2 ms samples
  int samples = std::max(3, std::min(9, static_cast<int>(budget_ms / std::max(1e-3f, one_ms * batch))));
  std::vector<double> t;
  for (int s = 0; s < samples; ++s) {
    CK(cudaEventRecord(a, g_stream));
    for (int i = 0; i < batch; ++i) CK(cudaGraphLaunch(exec, g_stream));
    CK(cudaEventRecord(b, g_stream));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e3 / batch / kCalls);
  }
  std::sort(t.begin(), t.end());
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

static float Bf(uint16_t b) { uint32_t u = uint32_t{b} << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t ToBf(double d) {  // round to nearest even
  float f = static_cast<float>(d);
  uint32_t u; memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
static int Ordered(uint16_t b) { return (b & 0x8000) ? -int(b & 0x7fff) : int(b); }

// Worst ulps of out against a double reference over `rows` rows (finite rows only).
int WorstUlps(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y, int64_t rows, int64_t cols, bool log) {
  int worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* xr = &x[r * cols];
    double m = -INFINITY;
    for (int64_t i = 0; i < cols; ++i) m = std::max(m, double(Bf(xr[i])));
    double ones = 0, rest = 0;
    for (int64_t i = 0; i < cols; ++i) { double t = Bf(xr[i]) - m; if (t == 0) ones += 1; else rest += std::exp(t); }
    for (int64_t i = 0; i < cols; ++i) {
      double t = Bf(xr[i]) - m;
      double ref = log ? t - std::log1p(ones - 1 + rest) : std::exp(t) / (ones + rest);
      worst = std::max(worst, std::abs(Ordered(ToBf(ref)) - Ordered(y[r * cols + i])));
    }
  }
  return worst;
}

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "all";
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  TVMFFIEnvSetStream(kDLCUDA, 0, g_stream, nullptr);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const size_t big = size_t{4096} * 151936;
  uint16_t *x, *y;
  CK(cudaMalloc(&x, big * 2));
  CK(cudaMalloc(&y, big * 2));
  {
    std::vector<uint16_t> h(big);
    std::mt19937 g(1);
    std::normal_distribution<float> nd(0.f, 4.f);
    for (size_t i = 0; i < (size_t{1} << 24); ++i) h[i] = ToBf(nd(g));
    for (size_t i = size_t{1} << 24; i < big; ++i) h[i] = h[i % ((size_t{1} << 24) - 7)];
    CK(cudaMemcpy(x, h.data(), big * 2, cudaMemcpyHostToDevice));
  }
  if (only == "all" || only == "softmax") {
    struct Case { int64_t rows, cols; std::vector<int> variants; };
    const std::vector<Case> cases = {
      {1, 32000, {0, 1, 10, 11, 12, 3}}, {32, 32000, {0, 1, 10, 11, 12, 3}}, {256, 32000, {0, 1, 10, 11, 12}},
      {4096, 32000, {0, 1, 10, 11, 12}},
      {1, 128256, {0, 11, 12, 3}}, {32, 128256, {0, 11, 12, 3}}, {256, 128256, {0, 11, 12}}, {4096, 128256, {0, 11, 12}},
      {1, 151936, {0, 12, 3}}, {32, 151936, {0, 12, 3}}, {256, 151936, {0, 12}}, {4096, 151936, {0, 12}},
    };
    for (bool log : {false, true}) {
      for (const Case& c : cases) {
        if (log && c.cols == 151936) continue;
        std::vector<uint16_t> hx(c.rows * c.cols), hy(c.rows * c.cols);
        printf("%-11s %4ldx%-7ld", log ? "log_softmax" : "softmax", (long)c.rows, (long)c.cols);
        for (int v : c.variants) {
          const double us = TimeGraph([&] { ProbeSoftmax(v, x, y, c.rows, c.cols, log); });
          int ulps = -1;
          if (us > 0 && c.rows <= 32) {
            const int64_t check_rows = std::min<int64_t>(c.rows, 4);
            CK(cudaMemcpy(hx.data(), x, check_rows * c.cols * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hy.data(), y, check_rows * c.cols * 2, cudaMemcpyDeviceToHost));
            ulps = WorstUlps(hx, hy, check_rows, c.cols, log);
          }
          printf("  v%d=%8.2f", v, us);
          if (ulps >= 0) printf("(%du)", ulps);
        }
        const double bytes = 2.0 * 2 * c.rows * c.cols;
        printf("\n");
        (void)bytes;
        fflush(stdout);
      }
    }
  }
  if (only == "all" || only == "gated") {
    struct Case { int64_t rows, d; };
    const std::vector<Case> cases = {{1, 4096}, {8, 4096}, {32, 4096}, {64, 4096}, {128, 4096}, {256, 4096},
                                     {1, 14336}, {128, 14336}, {16384, 8192}};
    for (bool gelu : {false, true}) {
      for (const Case& c : cases) {
        printf("%-12s %5ldx%-6ld", gelu ? "gelu_and_mul" : "silu_and_mul", (long)c.rows, (long)c.d);
        for (int v = 0; v <= 5; ++v) {
          const double us = TimeGraph([&] { ProbeGated(v, gelu, x, y, c.rows, c.d); });
          printf("  v%d=%8.2f", v, us);
        }
        printf("\n");
        fflush(stdout);
      }
    }
  }
  if (only == "all" || only == "scale") {
    const int64_t n = int64_t{1} << 28;
    float *fx, *fy;
    CK(cudaMalloc(&fx, n * 4));
    CK(cudaMalloc(&fy, n * 4));
    CK(cudaMemset(fx, 0, n * 4));
    const double copy = TimeGraph([&] { CK(cudaMemcpyAsync(fy, fx, n * 4, cudaMemcpyDeviceToDevice, g_stream)); });
    printf("scale f32 %ld: copy=%.1f us (%.2f TB/s)\n", (long)n, copy, 2.0 * n * 4 / copy * 1e-6);
    for (int v : {0, 100, 400}) {
      const double us = TimeGraph([&] { ProbeScale(v, fx, fy, n); });
      printf("  scale v%d = %.1f us (%.2f TB/s)\n", v, us, 2.0 * n * 4 / us * 1e-6);
      fflush(stdout);
    }
  }
  return 0;
}
