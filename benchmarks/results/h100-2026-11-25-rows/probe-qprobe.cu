// A/B of the fp8 norm kernels (production launch shape), NORM_SRC selects the build.
#include NORM_SRC
#include <cstdio>
#include <vector>
#include <algorithm>
using namespace hetkern::cuda;
using bf = __nv_bfloat16;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("ERR %s %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
static cudaStream_t s;
template <class F> float TimeGraph(F launch) {
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 20; ++i) launch();
  CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < 14; ++r) {
    cudaEventRecord(a, s); CK(cudaGraphLaunch(ge, s)); cudaEventRecord(b, s); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 2) t.push_back(ms * 1000 / 20);
  }
  CK(cudaGetLastError()); std::sort(t.begin(), t.end());
  cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  return t[t.size() / 2];
}
int sms; bf *X, *R, *W; uint8_t* O; float* S;
template <int kCache, RowGrid G>
float Run(int op, int64_t rows, int64_t H, int tpr, int rpb, int64_t grid) {
  Rows<bf, bf, uint8_t> a{X, op == 1 ? R : nullptr, W, op == 2 ? W : nullptr, O, S, rows, H, 1.f / H, 1e-6f, H, H, H};
  dim3 block(tpr, rpb);
  if (op == 0) return TimeGraph([&] { RMSNormKernel<bf, bf, 8, kCache, false, false, uint8_t, G><<<grid, block, 0, s>>>(a); });
  if (op == 1) return TimeGraph([&] { RMSNormKernel<bf, bf, 8, kCache, true, false, uint8_t, G><<<grid, block, 0, s>>>(a); });
  return TimeGraph([&] { LayerNormKernel<bf, bf, 8, kCache, uint8_t, G><<<grid, block, 0, s>>>(a); });
}
template <int kCache>
float Pick(int op, int64_t rows, int64_t H, int tpr, int rpb, int64_t grid) {
  return grid <= sms ? Run<kCache, RowGrid::kOneBlockPerSm>(op, rows, H, tpr, rpb, grid)
                     : Run<kCache, RowGrid::kSeveralBlocksPerSm>(op, rows, H, tpr, rpb, grid);
}
int main() {
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t maxn = size_t{4096} * 16384 * 4;
  CK(cudaMalloc(&X, maxn * 2)); CK(cudaMalloc(&R, maxn * 2)); CK(cudaMalloc(&O, maxn)); CK(cudaMalloc(&W, 65536 * 2)); CK(cudaMalloc(&S, 4));
  CK(cudaMemset(X, 0x3f, maxn * 2)); CK(cudaMemset(R, 0, maxn * 2)); CK(cudaMemset(W, 0x3f, 65536 * 2));
  float sc = 0.5f; CK(cudaMemcpy(S, &sc, 4, cudaMemcpyHostToDevice));
  struct Sh { int64_t r, h; } shapes[] = {{1, 4096}, {128, 4096}, {2048, 1024}, {1024, 4096}, {256, 16384}, {4096, 4096}, {16384, 1024}, {4096, 8192}, {16384, 4096}, {4096, 16384}};
  const char* names[] = {"rmsnorm_quant", "fused_add_rmsnorm_quant", "layernorm_quant"};
  for (int op = 0; op < 3; ++op) for (auto sh : shapes) {
    const int64_t packs = sh.h / 8;
    const int per = op == 2 ? 2 : (packs >= 512 ? 2 : 1);
    int64_t tpr = std::clamp<int64_t>(((packs + per - 1) / per + 31) / 32 * 32, 32, 512);
    int cache = 1; while (cache < 4 && packs > cache * tpr) cache *= 2;
    const int rpb = std::max<int64_t>(1, 128 / tpr);
    const int64_t grid = (sh.r + rpb - 1) / rpb;
    float us = cache == 1 ? Pick<1>(op, sh.r, sh.h, tpr, rpb, grid) : cache == 2 ? Pick<2>(op, sh.r, sh.h, tpr, rpb, grid) : Pick<4>(op, sh.r, sh.h, tpr, rpb, grid);
    printf("%-24s %6ld x %-6ld tpr %3ld cache %d : %8.2f us\n", names[op], sh.r, sh.h, tpr, cache, us);
  }
}
