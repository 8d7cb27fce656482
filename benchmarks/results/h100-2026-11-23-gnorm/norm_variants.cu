// Experimental norm kernels (bf16) timed under CUDA graph replay (20 calls per
// graph, events), to pick the launch shapes and reduction styles of
// src/cuda/norm.cu. nvcc -O3 -std=c++17 -arch=sm_90 norm_variants.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(e)                                                                        \
  do {                                                                               \
    cudaError_t err_ = (e);                                                          \
    if (err_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #e, cudaGetErrorString(err_)); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

using bf16 = __nv_bfloat16;
struct alignas(16) P8 {
  bf16 lane[8];
};
constexpr int L = 8;

struct Args {
  const bf16* x;
  bf16* residual;
  const bf16* weight;
  const bf16* bias;
  bf16* out;
  long rows, hidden;
  float eps;
};

__device__ __forceinline__ void Wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void Allow() { asm volatile("griddepcontrol.launch_dependents;" :::); }
__device__ __forceinline__ float Ld(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ bf16 St(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// kDirect: every thread adds the warp partials in warp order from shared
// memory; else a second butterfly.
template <int kDirect>
__device__ __forceinline__ float RowSum(float v, float (&buf)[2][32], int& turn) {
  v = WarpSum(v);
  if constexpr (kDirect == 2) return v;
  const int wpr = blockDim.x / 32;
  if (wpr == 1) return v;
  const int lane = threadIdx.x % 32;
  float* part = buf[turn] + threadIdx.y * wpr;
  turn ^= 1;
  if (lane == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  if constexpr (kDirect == 1) {
    float s = part[0];
    for (int w = 1; w < wpr; ++w) s += part[w];
    return s;
  } else {
    return WarpSum(lane < wpr ? part[lane] : 0.f);
  }
}

// In-thread sum of squares with kAcc interleaved accumulators.
template <int kAcc>
struct Accum {
  float s[kAcc] = {};
  int i = 0;
  __device__ __forceinline__ void Add(float v) {}
};

template <int kCache, int kBound, bool kFused, int kAcc, int kDirect, bool kGridStride>
__global__ void __launch_bounds__(kBound) RmsK(Args a) {
  __shared__ float buf[kDirect == 2 ? 1 : 2][32];
  int turn = 0;
  Wait();
  Allow();
  const long packs = a.hidden / L;
  const P8* wp = reinterpret_cast<const P8*>(a.weight);
  P8 wc[kCache];
#pragma unroll
  for (int s = 0; s < kCache; ++s) {
    long p = threadIdx.x + long(s) * blockDim.x;
    if (p < packs) wc[s] = wp[p];
  }
  const long step = kGridStride ? long(gridDim.x) * blockDim.y : a.rows + 1;
  for (long first = long(blockIdx.x) * blockDim.y; first < a.rows; first += step) {
    const long row = first + threadIdx.y;
    const bool active = row < a.rows;
    const P8* x = reinterpret_cast<const P8*>(a.x + row * a.hidden);
    P8* res = reinterpret_cast<P8*>(a.residual + row * a.hidden);
    P8* out = reinterpret_cast<P8*>(a.out + row * a.hidden);
    P8 c[kCache], rc[kCache];
    if (active) {
#pragma unroll
      for (int s = 0; s < kCache; ++s) {
        long p = threadIdx.x + long(s) * blockDim.x;
        if (p < packs) {
          c[s] = x[p];
          if (kFused) rc[s] = res[p];
        }
      }
    }
    float acc[kAcc];
#pragma unroll
    for (int k = 0; k < kAcc; ++k) acc[k] = 0.f;
    if (active) {
#pragma unroll
      for (int s = 0; s < kCache; ++s) {
        long p = threadIdx.x + long(s) * blockDim.x;
        if (p < packs) {
          P8 v = c[s];
          float val[L];
#pragma unroll
          for (int i = 0; i < L; ++i) val[i] = Ld(v.lane[i]);
          if (kFused) {
#pragma unroll
            for (int i = 0; i < L; ++i) {
              v.lane[i] = St(val[i] + Ld(rc[s].lane[i]));
              val[i] = Ld(v.lane[i]);
            }
            res[p] = v;
            c[s] = v;
          }
#pragma unroll
          for (int i = 0; i < L; ++i) acc[(s * L + i) % kAcc] += val[i] * val[i];
        }
      }
    }
    float ss;
    if constexpr (kAcc == 1) {
      ss = acc[0];
    } else if constexpr (kAcc == 2) {
      ss = acc[0] + acc[1];
    } else {
      ss = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
    const float inv = 1.f / sqrtf(RowSum<kDirect>(ss, reinterpret_cast<float(&)[2][32]>(buf), turn) / float(a.hidden) + a.eps);
    if (!active) continue;
#pragma unroll
    for (int s = 0; s < kCache; ++s) {
      long p = threadIdx.x + long(s) * blockDim.x;
      if (p < packs) {
        P8 o;
#pragma unroll
        for (int i = 0; i < L; ++i) {
          float n = Ld(St(Ld(c[s].lane[i]) * inv));
          o.lane[i] = St(n * Ld(wc[s].lane[i]));
        }
        out[p] = o;
      }
    }
  }
}

// Layernorm: kChan false: two-pass (mean, then squared deviations, two
// reductions); true: per-thread (mean, M2) merged by Chan's formula with
// equal counts (requires packs == kCache * blockDim.x), one reduction.
__device__ __forceinline__ void ChanMerge(float& mean, float& m2, float count_each, float omean,
                                          float om2) {
  const float d = omean - mean;
  mean = (mean + omean) * 0.5f;
  m2 = (m2 + om2) + d * d * (count_each * 0.5f);
}

template <int kCache, int kBound, bool kChan, bool kDirect>
__global__ void __launch_bounds__(kBound) LnK(Args a) {
  __shared__ float buf[2][32];
  __shared__ float buf2[32];
  int turn = 0;
  Wait();
  Allow();
  const long packs = a.hidden / L;
  const P8* wp = reinterpret_cast<const P8*>(a.weight);
  const P8* bp = reinterpret_cast<const P8*>(a.bias);
  P8 wc[kCache], bc[kCache];
#pragma unroll
  for (int s = 0; s < kCache; ++s) {
    long p = threadIdx.x + long(s) * blockDim.x;
    if (p < packs) {
      wc[s] = wp[p];
      bc[s] = bp[p];
    }
  }
  for (long first = long(blockIdx.x) * blockDim.y; first < a.rows; first += long(gridDim.x) * blockDim.y) {
    const long row = first + threadIdx.y;
    const bool active = row < a.rows;
    const P8* x = reinterpret_cast<const P8*>(a.x + row * a.hidden);
    P8* out = reinterpret_cast<P8*>(a.out + row * a.hidden);
    P8 c[kCache];
    float mean, rstd;
    if constexpr (!kChan) {
      float sum = 0;
      if (active) {
#pragma unroll
        for (int s = 0; s < kCache; ++s) {
          long p = threadIdx.x + long(s) * blockDim.x;
          if (p < packs) {
            c[s] = x[p];
#pragma unroll
            for (int i = 0; i < L; ++i) sum += Ld(c[s].lane[i]);
          }
        }
      }
      mean = RowSum<kDirect>(sum, buf, turn) / float(a.hidden);
      float sq = 0;
      if (active) {
#pragma unroll
        for (int s = 0; s < kCache; ++s) {
          long p = threadIdx.x + long(s) * blockDim.x;
          if (p < packs) {
#pragma unroll
            for (int i = 0; i < L; ++i) {
              float d = Ld(c[s].lane[i]) - mean;
              sq += d * d;
            }
          }
        }
      }
      rstd = 1.f / sqrtf(RowSum<kDirect>(sq, buf, turn) / float(a.hidden) + a.eps);
    } else {
      // every thread owns exactly kCache packs
      float sum = 0;
      if (active) {
#pragma unroll
        for (int s = 0; s < kCache; ++s) {
          c[s] = x[threadIdx.x + s * blockDim.x];
#pragma unroll
          for (int i = 0; i < L; ++i) sum += Ld(c[s].lane[i]);
        }
      }
      constexpr float kN = kCache * L;
      float m = sum * (1.f / kN), m2 = 0;
#pragma unroll
      for (int s = 0; s < kCache; ++s)
#pragma unroll
        for (int i = 0; i < L; ++i) {
          float d = Ld(c[s].lane[i]) - m;
          m2 += d * d;
        }
      float n = kN;
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        float om = __shfl_xor_sync(0xffffffffu, m, o), om2 = __shfl_xor_sync(0xffffffffu, m2, o);
        ChanMerge(m, m2, n, om, om2);
        n *= 2;
      }
      const int wpr = blockDim.x / 32;
      if (wpr > 1) {
        float* pm = buf[0] + threadIdx.y * wpr;
        float* pq = buf2 + threadIdx.y * wpr;
        if (threadIdx.x % 32 == 0) {
          pm[threadIdx.x / 32] = m;
          pq[threadIdx.x / 32] = m2;
        }
        __syncthreads();
        // butterfly over the warp partials, lane l holding partial l % wpr
        const int lane = threadIdx.x % 32;
        m = pm[lane % wpr];
        m2 = pq[lane % wpr];
        for (int o = 1; o < wpr; o *= 2) {
          float om = __shfl_xor_sync(0xffffffffu, m, o), om2 = __shfl_xor_sync(0xffffffffu, m2, o);
          ChanMerge(m, m2, n, om, om2);
          n *= 2;
        }
        __syncthreads();  // buffers reused by the next row (bench only)
      }
      mean = m;
      rstd = 1.f / sqrtf(m2 / float(a.hidden) + a.eps);
    }
    if (!active) continue;
#pragma unroll
    for (int s = 0; s < kCache; ++s) {
      long p = threadIdx.x + long(s) * blockDim.x;
      if (p < packs) {
        P8 o;
#pragma unroll
        for (int i = 0; i < L; ++i)
          o.lane[i] = St((Ld(c[s].lane[i]) - mean) * rstd * Ld(wc[s].lane[i]) + Ld(bc[s].lane[i]));
        out[p] = o;
      }
    }
  }
}

__global__ void EmptyK(Args a) {
  Wait();
  Allow();
}

// ---------------------------------------------------------------------------
struct Bufs {
  bf16 *x, *res, *w, *b, *out, *res0;
  long rows, hidden;
};

static cudaStream_t g_stream;
static int g_sms;

template <class K>
static void Launch(K kernel, dim3 grid, dim3 block, Args a, bool pdl) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = g_stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, a);
  if (e != cudaSuccess) {
    fprintf(stderr, "launch (%d,%d)x(%d,%d) failed: %s\n", grid.x, grid.y, block.x, block.y, cudaGetErrorString(e));
    exit(2);
  }
}
// Whether kernel accepts block (launch bounds, registers).
template <class K>
static bool Fits(K kernel, dim3 block) {
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, kernel));
  return int(block.x * block.y) <= fa.maxThreadsPerBlock;
}

template <class F>
static double GraphTimeUs(F&& call, int calls = 20) {
  for (int i = 0; i < 3; ++i) call();
  CK(cudaStreamSynchronize(g_stream));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < calls; ++i) call();
  CK(cudaStreamEndCapture(g_stream, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  CK(cudaGraphLaunch(ge, g_stream));
  CK(cudaStreamSynchronize(g_stream));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  // batch so that a sample takes >= 2 ms
  int batch = 1;
  for (;;) {
    CK(cudaEventRecord(e0, g_stream));
    for (int i = 0; i < batch; ++i) CK(cudaGraphLaunch(ge, g_stream));
    CK(cudaEventRecord(e1, g_stream));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms >= 2.0f || batch >= 4096) break;
    batch *= 2;
  }
  std::vector<double> t;
  for (int s = 0; s < 9; ++s) {
    CK(cudaEventRecord(e0, g_stream));
    for (int i = 0; i < batch; ++i) CK(cudaGraphLaunch(ge, g_stream));
    CK(cudaEventRecord(e1, g_stream));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1e3 / batch / calls);
  }
  std::sort(t.begin(), t.end());
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return t[t.size() / 2];
}

static std::vector<bf16> Host(const bf16* d, long n) {
  std::vector<bf16> h(n);
  CK(cudaMemcpy(h.data(), d, n * 2, cudaMemcpyDeviceToHost));
  return h;
}

static float F(bf16 v) { return __bfloat162float(v); }
static bf16 B(float v) { return __float2bfloat16_rn(v); }

// Checks out (and residual) against a CPU reference; integer inputs keep every
// sum exact, so rmsnorm must be bit-exact. Returns mismatching elements.
static long CheckRms(const Bufs& b, bool fused, long check_rows) {
  long n = b.rows * b.hidden;
  auto x = Host(b.x, n), r0 = Host(b.res0, n), w = Host(b.w, b.hidden), out = Host(b.out, n), res = Host(b.res, n);
  long bad = 0;
  for (long row = 0; row < std::min(b.rows, check_rows); ++row) {
    std::vector<float> v(b.hidden);
    float ss = 0;
    for (long i = 0; i < b.hidden; ++i) {
      float val = F(x[row * b.hidden + i]);
      if (fused) {
        bf16 s = B(val + F(r0[row * b.hidden + i]));
        if (memcmp(&s, &res[row * b.hidden + i], 2)) ++bad;
        val = F(s);
      }
      v[i] = val;
      ss += val * val;
    }
    float inv = 1.f / sqrtf(ss / float(b.hidden) + 1e-6f);
    for (long i = 0; i < b.hidden; ++i) {
      bf16 e = B(F(B(v[i] * inv)) * F(w[i]));
      if (memcmp(&e, &out[row * b.hidden + i], 2)) ++bad;
    }
  }
  return bad;
}

static double CheckLn(const Bufs& b, long check_rows) {
  long n = b.rows * b.hidden;
  auto x = Host(b.x, n), w = Host(b.w, b.hidden), bb = Host(b.b, b.hidden), out = Host(b.out, n);
  double worst = 0;
  for (long row = 0; row < std::min(b.rows, check_rows); ++row) {
    double s = 0, q = 0;
    for (long i = 0; i < b.hidden; ++i) s += F(x[row * b.hidden + i]);
    double mean = s / b.hidden;
    for (long i = 0; i < b.hidden; ++i) {
      double d = F(x[row * b.hidden + i]) - mean;
      q += d * d;
    }
    double rstd = 1 / sqrt(q / b.hidden + 1e-5);
    for (long i = 0; i < b.hidden; ++i) {
      double e = (F(x[row * b.hidden + i]) - mean) * rstd * F(w[i]) + F(bb[i]);
      double err = fabs(F(out[row * b.hidden + i]) - e) / (fabs(e) + 1e-2);
      worst = std::max(worst, err);
    }
  }
  return worst;
}

static Bufs Alloc(long rows, long hidden) {
  Bufs b{};
  b.rows = rows;
  b.hidden = hidden;
  long n = rows * hidden;
  std::vector<bf16> h(n);
  srand(1234);
  for (auto& v : h) v = B(float(rand() % 17 - 8));
  CK(cudaMalloc(&b.x, n * 2));
  CK(cudaMalloc(&b.res, n * 2));
  CK(cudaMalloc(&b.res0, n * 2));
  CK(cudaMalloc(&b.out, n * 2));
  CK(cudaMemcpy(b.x, h.data(), n * 2, cudaMemcpyHostToDevice));
  for (auto& v : h) v = B(float(rand() % 9 - 4));
  CK(cudaMemcpy(b.res0, h.data(), n * 2, cudaMemcpyHostToDevice));
  std::vector<bf16> w(hidden);
  for (auto& v : w) v = B(float(rand() % 7 - 3) * 0.25f + 0.5f);
  CK(cudaMalloc(&b.w, hidden * 2));
  CK(cudaMalloc(&b.b, hidden * 2));
  CK(cudaMemcpy(b.w, w.data(), hidden * 2, cudaMemcpyHostToDevice));
  for (auto& v : w) v = B(float(rand() % 5 - 2) * 0.125f);
  CK(cudaMemcpy(b.b, w.data(), hidden * 2, cudaMemcpyHostToDevice));
  return b;
}

static void Free(Bufs& b) {
  cudaFree(b.x);
  cudaFree(b.res);
  cudaFree(b.res0);
  cudaFree(b.out);
  cudaFree(b.w);
  cudaFree(b.b);
}

static Args ArgsOf(const Bufs& b) { return Args{b.x, b.res, b.w, b.b, b.out, b.rows, b.hidden, 1e-6f}; }

static int GridFor(long rows, int rpb, int threads, bool capped) {
  long tiles = (rows + rpb - 1) / rpb;
  if (!capped) return int(tiles);
  return int(std::max<long>(1, std::min<long>(tiles, long(g_sms) * 16)));
}

// A kernel choice for (threads per row, cache); returns nullptr if none.
using RmsFn = void (*)(Args);
template <bool kFused, int kAcc, int kDirect, bool kGS>
static RmsFn PickRms(int cache, int threads) {
  if constexpr (kDirect == 2) {
    if (cache == 8) return RmsK<8, 128, kFused, kAcc, 2, kGS>;
    if (cache == 16) return RmsK<16, 128, kFused, kAcc, 2, kGS>;
    if (cache == 4) return RmsK<4, 128, kFused, kAcc, 2, kGS>;
    return nullptr;
  }
  switch (cache) {
    case 1: return threads <= 512 ? RmsK<1, 512, kFused, kAcc, kDirect, kGS> : RmsK<1, 1024, kFused, kAcc, kDirect, kGS>;
    case 2: return threads <= 256 ? RmsK<2, 256, kFused, kAcc, kDirect, kGS> : RmsK<2, 512, kFused, kAcc, kDirect, kGS>;
    case 4: return threads <= 256 ? RmsK<4, 256, kFused, kAcc, kDirect, kGS> : RmsK<4, 512, kFused, kAcc, kDirect, kGS>;
    case 8: return threads <= 256 ? RmsK<8, 256, kFused, kAcc, kDirect, kGS> : nullptr;
  }
  return nullptr;
}

static RmsFn PickRmsAll(bool fused, int acc, int direct, bool gs, int cache, int threads) {
#define P(F_, A_, D_, G_) \
  if (fused == F_ && acc == A_ && direct == D_ && gs == G_) return PickRms<F_, A_, D_, G_>(cache, threads);
  P(false, 1, false, true) P(false, 1, true, true) P(false, 4, true, true) P(false, 4, false, true)
  P(true, 1, false, true) P(true, 1, true, true) P(true, 4, true, true) P(true, 4, false, true)
  P(false, 1, true, false) P(false, 4, true, false) P(true, 1, true, false) P(true, 4, true, false)
  P(false, 1, 2, true) P(false, 4, 2, true) P(true, 1, 2, true) P(true, 4, 2, true)
#undef P
  return nullptr;
}

int main(int argc, char** argv) {
  std::string only = argc > 1 ? argv[1] : "all";
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs\n", prop.name, g_sms);
  {
    Bufs b = Alloc(1, 2048);
    Args a = ArgsOf(b);
    for (int pdl = 0; pdl < 2; ++pdl)
      printf("empty kernel pdl=%d: %.3f us\n", pdl, GraphTimeUs([&] { Launch(EmptyK, dim3(1), dim3(128), a, pdl); }));
    Free(b);
  }
  const int row_counts[] = {1, 8, 32, 128};
  const int hiddens[] = {2048, 4096, 8192};
  for (int fused = 0; fused < 2 && (only == "all" || only == "decode"); ++fused) {
    for (int hidden : hiddens) {
      for (int rows : row_counts) {
        Bufs b = Alloc(rows, hidden);
        Args a = ArgsOf(b);
        const int packs = hidden / L;
        struct Res {
          std::string name;
          double us;
          long bad;
        };
        std::vector<Res> res;
        auto run = [&](const std::string& name, RmsFn k, dim3 grid, dim3 block, bool pdl) {
          if (!k || !Fits(k, block)) {
            printf("skip %s\n", name.c_str());
            return;
          }
          CK(cudaMemcpy(b.res, b.res0, size_t(rows) * hidden * 2, cudaMemcpyDeviceToDevice));
          CK(cudaMemset(b.out, 0xff, size_t(rows) * hidden * 2));
          Launch(k, grid, block, a, pdl);
          CK(cudaStreamSynchronize(g_stream));
          CK(cudaGetLastError());
          long bad = CheckRms(b, fused, 4);
          double us = GraphTimeUs([&] { Launch(k, grid, block, a, pdl); });
          res.push_back({name, us, bad});
        };
        // current: threads = packs/4 (>= 32), cache 4, >= 128 threads per block
        {
          int t = std::max(32, packs / 4);
          int rpb = std::max(1, 128 / t);
          dim3 block(t, rpb), grid(GridFor(rows, rpb, t, true));
          run("cur", PickRmsAll(fused, 1, false, true, 4, t * rpb), grid, block, true);
          run("cur-nopdl", PickRmsAll(fused, 1, false, true, 4, t * rpb), grid, block, false);
          run("cur-direct", PickRmsAll(fused, 1, true, true, 4, t * rpb), grid, block, true);
          run("cur-direct-acc4", PickRmsAll(fused, 4, true, true, 4, t * rpb), grid, block, true);
        }
        for (int acc : {1, 4})
          for (int rpb : {1, 2, 4}) {
            int t = 32, cache = packs / 32;
            dim3 block(t, rpb), grid(GridFor(rows, rpb, t, true));
            char nm[64];
            snprintf(nm, sizeof nm, "t32 c%d r%d acc%d warponly", cache, rpb, acc);
            run(nm, PickRmsAll(fused, acc, 2, true, cache, t * rpb), grid, block, true);
          }
        for (int t : {32, 64, 128, 256, 512, 1024}) {
          int cache = packs / t;
          if (cache < 1 || cache > 8 || cache * t != packs) continue;
          for (int rpb : {1, 2, 4}) {
            if (t * rpb > 1024 || (rpb > 1 && t > 128)) continue;
            dim3 block(t, rpb), grid(GridFor(rows, rpb, t, true));
            char nm[64];
            for (int acc : {1, 4}) {
              for (int direct : {0, 1}) {
                if (t == 32 && direct) continue;
                snprintf(nm, sizeof nm, "t%d c%d r%d acc%d %s", t, cache, rpb, acc, direct ? "direct" : "bfly");
                run(nm, PickRmsAll(fused, acc, direct, true, cache, t * rpb), grid, block, true);
              }
            }
          }
        }
        for (auto& r : res)
          printf("%s %dx%d %-26s %7.3f us%s\n", fused ? "fused" : "rms", rows, hidden, r.name.c_str(), r.us,
                 r.bad ? (" BAD " + std::to_string(r.bad)).c_str() : "");
        fflush(stdout);
        Free(b);
      }
    }
  }
  // layernorm decode
  for (int hidden : {2048, 4096, 8192}) {
    if (!(only == "all" || only == "decode" || only == "ln")) break;
    for (int rows : row_counts) {
      Bufs b = Alloc(rows, hidden);
      Args a = ArgsOf(b);
      a.eps = 1e-5f;
      const int packs = hidden / L;
      auto run = [&](const char* name, void (*k)(Args), dim3 grid, dim3 block) {
        if (!Fits(k, block)) {
          printf("skip %s\n", name);
          return;
        }
        CK(cudaMemset(b.out, 0xff, size_t(rows) * hidden * 2));
        Launch(k, grid, block, a, true);
        CK(cudaStreamSynchronize(g_stream));
        CK(cudaGetLastError());
        double err = CheckLn(b, 4);
        double us = GraphTimeUs([&] { Launch(k, grid, block, a, true); });
        printf("ln %dx%d %-26s %7.3f us err %.2e\n", rows, hidden, name, us, err);
      };
      for (int t : {32, 64, 128, 256, 512}) {
        int cache = packs / t;
        if (cache < 1 || cache > 8 || cache * t != packs) continue;
        int rpb = std::max(1, 128 / t);
        dim3 block(t, rpb), grid(GridFor(rows, rpb, t, true));
        char nm[64];
#define LNV(C_, B_)                                                                   \
  if (cache == C_ && t <= B_) {                                                       \
    snprintf(nm, sizeof nm, "t%d c%d r%d two-pass bfly", t, cache, rpb);              \
    run(nm, LnK<C_, B_, false, false>, grid, block);                                  \
    snprintf(nm, sizeof nm, "t%d c%d r%d two-pass direct", t, cache, rpb);            \
    run(nm, LnK<C_, B_, false, true>, grid, block);                                   \
    snprintf(nm, sizeof nm, "t%d c%d r%d chan", t, cache, rpb);                       \
    run(nm, LnK<C_, B_, true, true>, grid, block);                                    \
  } else
        LNV(1, 512) LNV(2, 512) LNV(4, 512) LNV(8, 256) {}
#undef LNV
      }
      fflush(stdout);
      Free(b);
    }
  }
  // large shapes
  if (only == "all" || only == "large") {
    for (int fused = 0; fused < 2; ++fused) {
      long rows = 16384, hidden = 8192;
      Bufs b = Alloc(rows, hidden);
      Args a = ArgsOf(b);
      {
        double us = GraphTimeUs([&] { CK(cudaMemcpyAsync(b.out, b.x, rows * hidden * 2, cudaMemcpyDeviceToDevice, g_stream)); });
        printf("copy %ldx%ld: %.2f us (%.2f TB/s)\n", rows, hidden, us, 2.0 * rows * hidden * 2 / us / 1e6);
      }
      auto run = [&](const std::string& name, RmsFn k, dim3 grid, dim3 block) {
        if (!k || !Fits(k, block)) {
          printf("skip %s\n", name.c_str());
          return;
        }
        CK(cudaMemcpy(b.res, b.res0, size_t(rows) * hidden * 2, cudaMemcpyDeviceToDevice));
        Launch(k, grid, block, a, true);
        CK(cudaStreamSynchronize(g_stream));
        CK(cudaGetLastError());
        long bad = CheckRms(b, fused, 3);
        double us = GraphTimeUs([&] { Launch(k, grid, block, a, true); });
        double bytes = double(rows) * hidden * 2 * (fused ? 4 : 2);
        printf("%s %ldx%ld %-26s %8.2f us %.2f TB/s%s\n", fused ? "fused" : "rms", rows, hidden, name.c_str(), us,
               bytes / us / 1e6, bad ? " BAD" : "");
        fflush(stdout);
      };
      for (int t : {256, 512, 1024}) {
        int cache = hidden / L / t;
        for (int capped : {1, 0}) {
          dim3 block(t, 1), grid(GridFor(rows, 1, t, capped));
          for (int acc : {1, 4}) {
            char nm[64];
            snprintf(nm, sizeof nm, "t%d c%d %s acc%d", t, cache, capped ? "gridstride" : "block/row", acc);
            run(nm, PickRmsAll(fused, acc, true, capped, cache, t), grid, block);
          }
        }
        {
          dim3 block(t, 1), grid(GridFor(rows, 1, t, true));
          char nm[64];
          snprintf(nm, sizeof nm, "t%d c%d gridstride bfly", t, cache);
          run(nm, PickRmsAll(fused, 1, false, true, cache, t), grid, block);
        }
      }
      Free(b);
    }
    {
      long rows = 4096, hidden = 4096;
      Bufs b = Alloc(rows, hidden);
      Args a = ArgsOf(b);
      a.eps = 1e-5f;
      for (int t : {128, 256, 512}) {
        int cache = hidden / L / t;
        for (int capped : {1, 0}) {
          dim3 block(t, 1), grid(GridFor(rows, 1, t, capped));
          auto go = [&](const char* nm, void (*k)(Args)) {
            Launch(k, grid, block, a, true);
            CK(cudaStreamSynchronize(g_stream));
            double err = CheckLn(b, 3);
            double us = GraphTimeUs([&] { Launch(k, grid, block, a, true); });
            printf("ln %ldx%ld t%d c%d %s %-10s %8.2f us %.2f TB/s err %.1e\n", rows, hidden, t, cache,
                   capped ? "gridstride" : "block/row", nm, us, double(rows) * hidden * 4 / us / 1e6, err);
            fflush(stdout);
          };
          if (cache == 4) { go("two-pass", LnK<4, 256, false, true>); go("chan", LnK<4, 256, true, true>); go("tp-bfly", LnK<4, 256, false, false>); }
          if (cache == 2) { go("two-pass", LnK<2, 512, false, true>); go("chan", LnK<2, 512, true, true>); go("tp-bfly", LnK<2, 512, false, false>); }
          if (cache == 1) { go("two-pass", LnK<1, 512, false, true>); go("chan", LnK<1, 512, true, true>); go("tp-bfly", LnK<1, 512, false, false>); }
        }
      }
      Free(b);
    }
  }
  printf("done\n");
  return 0;
}
