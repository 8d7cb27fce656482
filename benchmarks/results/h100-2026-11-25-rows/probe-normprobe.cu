// Probe: rmsnorm / layernorm bf16 large-shape launch variants.
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
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < 12; ++r) {
    cudaEventRecord(a, s); CK(cudaGraphLaunch(ge, s)); cudaEventRecord(b, s); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 2) t.push_back(ms * 1000 / 20);
  }
  CK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  return t[t.size() / 2];
}

int sms;
bf *X, *O, *W, *B, *Rz;
template <int kCache, RowGrid G, int kOp>
void Variant(const char* op, int64_t R, int64_t H, int tpr, int grid, const char* gname) {
  constexpr bool kLN = kOp == 1;
  Rows<bf, bf, bf> a{X, kOp == 2 ? Rz : nullptr, W, kLN ? B : nullptr, O, nullptr, R, H, 1.f / H, 1e-6f, H, H, H};
  int rpb = std::max(1, 128 / tpr);
  dim3 block(tpr, rpb);
  auto kernel = kOp == 1 ? LayerNormKernel<bf, bf, 8, kCache, bf, G> : kOp == 2 ? RMSNormKernel<bf, bf, 8, kCache, true, false, bf, G> : RMSNormKernel<bf, bf, 8, kCache, false, false, bf, G>;
  cudaFuncAttributes at; cudaFuncGetAttributes(&at, kernel);
  int occ = 0; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel, tpr * rpb, 0);
  float us = TimeGraph([&] { kernel<<<grid, block, 0, s>>>(a); });
  printf("%-9s %6ld x %-6ld tpr %4d cache %d G%d grid %6d (%s) regs %3d occ %d : %8.2f us %5.2f TB/s\n", op, R, H, tpr, kCache,
         int(G), grid, gname, at.numRegs, occ, us, (kOp == 2 ? 4.0 : 2.0) * R * H * 2 / us / 1e6);
}

template <int kCache, int kLN>
void Grids(const char* op, int64_t R, int64_t H, int tpr) {
  int rpb = std::max(1, 128 / tpr);
  int64_t tiles = (R + rpb - 1) / rpb;
  int cur = std::min<int64_t>(tiles, int64_t{sms} * 16);
  int occ = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, RMSNormKernel<bf, bf, 8, kCache, false, false, bf, RowGrid::kBlocksLoop>, tpr * rpb, 0);
  if (cur < tiles) Variant<kCache, RowGrid::kBlocksLoop, kLN>(op, R, H, tpr, cur, "x16");
  Variant<kCache, RowGrid::kSeveralBlocksPerSm, kLN>(op, R, H, tpr, cur, "x16");
  Variant<kCache, RowGrid::kSeveralBlocksPerSm, kLN>(op, R, H, tpr, tiles, "tiles");
  Variant<kCache, RowGrid::kOneBlockPerSm, kLN>(op, R, H, tpr, tiles, "tiles-unb");
  int pers = sms * std::max(occ, 1);
  if (pers < tiles) Variant<kCache, RowGrid::kBlocksLoop, kLN>(op, R, H, tpr, pers, "persist");
}

int main() {
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t maxn = size_t{16384} * 16384;
  CK(cudaMalloc(&X, maxn * 2)); CK(cudaMalloc(&O, maxn * 2)); CK(cudaMalloc(&W, 65536 * 2)); CK(cudaMalloc(&B, 65536 * 2)); CK(cudaMalloc(&Rz, maxn * 2)); CK(cudaMemset(Rz, 0, maxn * 2));
  CK(cudaMemset(X, 0x3f, maxn * 2)); CK(cudaMemset(W, 0x3f, 65536 * 2)); CK(cudaMemset(B, 0, 65536 * 2));
  struct S { int64_t r, h; } shapes[] = {{4096, 4096}, {16384, 4096}, {1024, 4096}, {16384, 8192}, {4096, 8192}, {256, 16384}, {4096, 16384}, {65536, 1024}, {16384, 2048}, {256, 4096}, {512, 8192}, {1024, 2048}};
  for (auto sh : shapes) {
    float cp = TimeGraph([&] { cudaMemcpyAsync(O, X, sh.r * sh.h * 2, cudaMemcpyDeviceToDevice, s); });
    printf("copy      %6ld x %-6ld %8.2f us %5.2f TB/s\n", sh.r, sh.h, cp, 2.0 * sh.r * sh.h * 2 / cp / 1e6);
    const int64_t packs = sh.h / 8;
    for (int cache : {1, 2, 4}) {
      int tpr = packs / cache;
      if (tpr < 32 || tpr > 512) continue;
      const char* names[] = {"rmsnorm", "layernorm", "fused"};
      for (int k = 0; k < 3; ++k) {
        const char* op = names[k];
        if (k == 0) { if (cache == 1) Grids<1, 0>(op, sh.r, sh.h, tpr); if (cache == 2) Grids<2, 0>(op, sh.r, sh.h, tpr); if (cache == 4) Grids<4, 0>(op, sh.r, sh.h, tpr); }
        if (k == 1) { if (cache == 1) Grids<1, 1>(op, sh.r, sh.h, tpr); if (cache == 2) Grids<2, 1>(op, sh.r, sh.h, tpr); if (cache == 4) Grids<4, 1>(op, sh.r, sh.h, tpr); }
        if (k == 2) { if (cache == 1) Grids<1, 2>(op, sh.r, sh.h, tpr); if (cache == 2) Grids<2, 2>(op, sh.r, sh.h, tpr); if (cache == 4) Grids<4, 2>(op, sh.r, sh.h, tpr); }
      }
    }
  }
  return 0;
}
