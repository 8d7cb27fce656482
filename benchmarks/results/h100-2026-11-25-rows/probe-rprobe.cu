// rope: SM-count grid (grid-stride over tokens) against one block per token.
#include "src/cuda/rope.cu"
#include <cstdio>
#include <vector>
#include <algorithm>
using namespace hetkern; using namespace hetkern::cuda;
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
  return t[t.size() / 2];
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int64_t maxt = 65536, qh = 32, kh = 8, hs = 128;
  bf *q, *k; float* cache; int64_t* pos;
  CK(cudaMalloc(&q, maxt * qh * hs * 2)); CK(cudaMalloc(&k, maxt * kh * hs * 2));
  CK(cudaMalloc(&cache, 65536 * hs * 4)); CK(cudaMalloc(&pos, maxt * 8));
  CK(cudaMemset(q, 0x3f, maxt * qh * hs * 2)); CK(cudaMemset(k, 0x3f, maxt * kh * hs * 2)); CK(cudaMemset(cache, 0, 65536 * hs * 4));
  std::vector<int64_t> hp(maxt); for (int64_t i = 0; i < maxt; ++i) hp[i] = i % 65536;
  CK(cudaMemcpy(pos, hp.data(), maxt * 8, cudaMemcpyHostToDevice));
  for (int64_t tokens : {1, 128, 1024, 4096, 16384, 65536}) {
    RopeArgs a{}; a.num_tokens = tokens; a.num_heads = qh; a.num_kv_heads = kh; a.head_size = hs; a.rot_dim = hs;
    a.max_position = 65536; a.is_neox = true; a.positions = pos; a.query = q; a.key = k; a.cos_sin_cache = cache;
    a.query_stride = qh * hs; a.key_stride = kh * hs;
    const int threads = 320;
    float cp = TimeGraph([&] { cudaMemcpyAsync(k, q, tokens * 40 * hs * 2, cudaMemcpyDeviceToDevice, s); });
    for (int64_t grid : {std::min<int64_t>(tokens, sms * 16), tokens}) {
      float us = TimeGraph([&] { RopeKernel<bf, float, int64_t, true, 8, true><<<grid, threads, 0, s>>>(a); });
      printf("rope %6ld tokens grid %6ld : %8.2f us  %.2f TB/s  (copy of q+k bytes %.2f us)\n", tokens, grid, us, 2.0 * tokens * 40 * hs * 2 / us / 1e6, cp);
    }
  }
}
