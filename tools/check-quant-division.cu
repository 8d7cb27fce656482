// Copyright (c) hetkern developers. SPDX-License-Identifier: Apache-2.0
//
// Exhaustive check of the fp8 quant ops' division (src/cuda/quant_scale.cuh):
// QuantScale<float>::Divide(y) must give div.rn.f32's bits. Every pair of
// significands (y and scale in [1, 2), 2^46 pairs) is tried, which by the
// power-of-two scaling argument in quant_scale.cuh covers every y and scale
// that reach the reciprocal path; then the same pairs with the scale times
// 2^100, through the float64 path. Then samples over the whole exponent range,
// signs, zeros, subnormals, inf and NaN, whose quotients must clamp/round to
// the same e4m3 byte as div.rn.f32's.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -I. tools/check-quant-division.cu -o check-quant-division
//   ./check-quant-division            # prints the mismatch counts; exit 1 if any
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "src/core/fp8.h"
#include "src/cuda/quant_scale.cuh"

using hetkern::cuda::QuantScale;

__device__ unsigned long long mismatches;
__device__ unsigned long long first_mismatch;  // y bits << 32 | scale bits

__device__ void Check(float y, float s, bool as_e4m3) {
  const QuantScale<float> scale(s);
  const float got[1] = {scale.Divide(y)};
  const float want = __fdiv_rn(y, s);
  bool same;
  if (as_e4m3) {
    const auto clamp = [](float v) { return v > 448.f ? 448.f : v < -448.f ? -448.f : v; };
    same = hetkern::F32ToE4M3Bits(clamp(got[0])) == hetkern::F32ToE4M3Bits(clamp(want));
  } else {
    same = __float_as_uint(got[0]) == __float_as_uint(want);
  }
  if (!same && atomicAdd(&mismatches, 1ull) == 0) {
    first_mismatch = (static_cast<unsigned long long>(__float_as_uint(y)) << 32) | __float_as_uint(s);
  }
}

// Scales (1 + first_scale * 2^-23 ...) * 2^scale_exponent, every y in [1, 2).
__global__ void EverySignificandPair(uint32_t first_scale, int scale_exponent) {
  const float s = __uint_as_float((static_cast<uint32_t>(127 + scale_exponent) << 23) | (first_scale + blockIdx.y));
  for (uint32_t m = blockIdx.x * blockDim.x + threadIdx.x; m < (1u << 23); m += gridDim.x * blockDim.x) {
    Check(__uint_as_float(0x3f800000u | m), s, false);
  }
}

// Pseudo-random bit patterns of y and scale over every exponent, both signs.
__global__ void RandomPatterns(uint64_t seed, uint64_t count) {
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    uint64_t z = (seed + i) * 0x9e3779b97f4a7c15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    float y = __uint_as_float(static_cast<uint32_t>(z));
    float s = __uint_as_float(static_cast<uint32_t>(z >> 32));
    Check(y, s, true);
    // Quotients near e4m3's range: scale's exponent pulled to within 2^+-12 of y's.
    const int ey = (__float_as_uint(y) >> 23) & 0xff;
    const int es = min(254, max(1, ey - 12 + static_cast<int>((z >> 56) % 26)));
    s = __uint_as_float((__float_as_uint(s) & 0x807fffffu) | (static_cast<uint32_t>(es) << 23));
    Check(y, s, true);
  }
}

// Special values of y against special scales, both signs.
__global__ void SpecialValues() {
  const float inf = __int_as_float(0x7f800000), nan = __int_as_float(0x7fc00000);
  const float ys[] = {0.f, inf, nan, 1.17549435e-38f, 1e-45f, 3.40282347e38f, 448.f, 464.f, 0x1p-10f,
                      0x1.000002p-10f, 0x1p-11f, 0x1.2p-9f, 1.f, 3.f, 0.1f};
  const float ss[] = {1.f, 3.f, 0.1f, 0.f, 0x1p-64f, 0x1p64f, 0x1p-65f, 0x1p65f, 1e-40f, inf, nan,
                      3.40282347e38f, 1.17549435e-38f, 448.f, 1.f / 448.f};
  const int i = threadIdx.x;
  if (i >= 4 * sizeof(ys) / sizeof(float) * sizeof(ss) / sizeof(float)) return;
  const int n_ss = sizeof(ss) / sizeof(float);
  const float y = ys[i / 4 / n_ss], s = ss[(i / 4) % n_ss];
  Check(i & 1 ? -y : y, i & 2 ? -s : s, true);
}

static unsigned long long Read(const char* what) {
  unsigned long long n = 0, first = 0;
  cudaMemcpyFromSymbol(&n, mismatches, sizeof n);
  cudaMemcpyFromSymbol(&first, first_mismatch, sizeof first);
  const unsigned long long zero = 0;
  cudaMemcpyToSymbol(mismatches, &zero, sizeof zero);
  printf("%-40s %llu mismatches", what, n);
  if (n) printf(" (first: y 0x%08llx, scale 0x%08llx)", first >> 32, first & 0xffffffffull);
  printf("\n");
  return n;
}

int main() {
  unsigned long long bad = 0;
  constexpr uint32_t kScalesPerLaunch = 1024;
  // Scale exponent 0: the reciprocal step; 100: the float64 path (quotients
  // near 2^-100, still normal floats).
  for (const int scale_exponent : {0, 100}) {
    for (uint32_t first = 0; first < (1u << 23); first += kScalesPerLaunch) {
      EverySignificandPair<<<dim3(64, kScalesPerLaunch), 256>>>(first, scale_exponent);
    }
    if (cudaDeviceSynchronize() != cudaSuccess) return printf("CUDA error\n"), 2;
    bad += Read(scale_exponent == 0 ? "every significand pair (2^46), bits" : "same, scale * 2^100 (float64 path), bits");
  }
  RandomPatterns<<<1024, 256>>>(1, 1ull << 34);
  if (cudaDeviceSynchronize() != cudaSuccess) return printf("CUDA error\n"), 2;
  bad += Read("2^35 random y/scale patterns, e4m3 byte");
  SpecialValues<<<1, 1024>>>();
  if (cudaDeviceSynchronize() != cudaSuccess) return printf("CUDA error\n"), 2;
  bad += Read("special y x special scales, e4m3 byte");
  printf("%s\n", bad ? "FAILED" : "all equal");
  return bad ? 1 : 0;
}
