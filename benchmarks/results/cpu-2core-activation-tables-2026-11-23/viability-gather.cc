// Microbenchmark: 16-bit activation by table lookup (gather / scalar) vs the current kernel vs copy.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <chrono>
#include <vector>
#include <algorithm>
#include <hwy/highway.h>
#include "src/cpu/activation-inl.h"
#include "src/cpu/elementwise-inl.h"
namespace hn = hwy::HWY_NAMESPACE;
using namespace hetkern::cpu::HWY_NAMESPACE;
using hetkern::Activation;

template <Activation A, class T>
void Direct(const T* x, T* out, size_t n) { MapUnary(x, out, n, ActivationOp<A>()); }

void Scalar(const uint16_t* tab, const uint16_t* x, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = tab[x[i]];
}

// table padded by one entry; gather 32-bit lanes at byte offset 2*idx.
void Gather(const uint16_t* tab, const uint16_t* x, uint16_t* out, size_t n) {
  const hn::ScalableTag<uint16_t> d16;
  const hn::Repartition<uint32_t, decltype(d16)> d32;
  const hn::RebindToSigned<decltype(d32)> di32;
  const int32_t* base = reinterpret_cast<const int32_t*>(tab);
  const size_t N = hn::Lanes(d16);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    PrefetchAhead(x + i);
    PrefetchAhead<1>(out + i);
    const auto v = hn::LoadU(d16, x + i);
    const auto lo = hn::BitCast(di32, hn::ShiftLeft<1>(hn::PromoteLowerTo(d32, v)));
    const auto hi = hn::BitCast(di32, hn::ShiftLeft<1>(hn::PromoteUpperTo(d32, v)));
    const auto glo = hn::BitCast(d32, hn::GatherOffset(di32, base, lo));
    const auto ghi = hn::BitCast(d32, hn::GatherOffset(di32, base, hi));
    hn::StoreU(hn::OrderedTruncate2To(d16, glo, ghi), d16, out + i);
  }
  for (; i < n; ++i) out[i] = tab[x[i]];
}
// raw intrinsic with scale 2 (no shift)
void GatherRaw(const uint16_t* tab, const uint16_t* x, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    PrefetchAhead(x + i);
    PrefetchAhead<1>(out + i);
    __m512i v = _mm512_loadu_si512(x + i);
    __m512i lo = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v));
    __m512i hi = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1));
    __m512i glo = _mm512_i32gather_epi32(lo, tab, 2);
    __m512i ghi = _mm512_i32gather_epi32(hi, tab, 2);
    __m256i a = _mm512_cvtepi32_epi16(glo), b = _mm512_cvtepi32_epi16(ghi);
    _mm512_storeu_si512(out + i, _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1));
  }
  for (; i < n; ++i) out[i] = tab[x[i]];
}
// ymm gathers
void GatherRaw256(const uint16_t* tab, const uint16_t* x, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    PrefetchAhead(x + i);
    PrefetchAhead<1>(out + i);
    __m256i v = _mm256_loadu_si256((const __m256i*)(x + i));
    __m256i lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v));
    __m256i hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1));
    __m256i glo = _mm256_i32gather_epi32((const int*)tab, lo, 2);
    __m256i ghi = _mm256_i32gather_epi32((const int*)tab, hi, 2);
    __m128i a = _mm256_cvtepi32_epi16(glo), b = _mm256_cvtepi32_epi16(ghi);
    _mm256_storeu_si256((__m256i*)(out + i), _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1));
  }
  for (; i < n; ++i) out[i] = tab[x[i]];
}


void ScalarPf(const uint16_t* tab, const uint16_t* x, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    PrefetchAhead(x + i);
    PrefetchAhead<1>(out + i);
#pragma GCC unroll 32
    for (size_t j = 0; j < 32; ++j) out[i + j] = tab[x[i + j]];
  }
  for (; i < n; ++i) out[i] = tab[x[i]];
}
// vector load, scalar lookups via extracted 64-bit chunks
void ScalarVec(const uint16_t* tab, const uint16_t* x, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    if ((i & 31) == 0) { PrefetchAhead(x + i); PrefetchAhead<1>(out + i); }
    uint64_t v; memcpy(&v, x + i, 8);
    uint64_t r = (uint64_t)tab[v & 0xFFFF] | ((uint64_t)tab[(v >> 16) & 0xFFFF] << 16) |
                 ((uint64_t)tab[(v >> 32) & 0xFFFF] << 32) | ((uint64_t)tab[v >> 48] << 48);
    memcpy(out + i, &r, 8);
  }
  for (; i < n; ++i) out[i] = tab[x[i]];
}
template <class F> double Time(F f, size_t n, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
  }
  return best;
}

int main() {
  std::vector<uint16_t> tab(65536 + 8);
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < 65536; ++i) all[i] = i;
  // gelu bf16 table
  Direct<Activation::kGelu>(reinterpret_cast<const hwy::bfloat16_t*>(all.data()), reinterpret_cast<hwy::bfloat16_t*>(tab.data()), 65536);
  for (size_t n : {size_t(16384), size_t(1) << 20, size_t(16) << 20}) {
    std::vector<uint16_t> x(n), o1(n), o2(n);
    srand(1);
    for (auto& v : x) { float f = (rand() / (float)RAND_MAX - 0.5f) * 8; uint32_t b; memcpy(&b, &f, 4); v = b >> 16; }
    int reps = n <= 16384 ? 2000 : n <= (1u<<20) ? 100 : 8;
    auto bx = reinterpret_cast<const hwy::bfloat16_t*>(x.data());
    auto bo = reinterpret_cast<hwy::bfloat16_t*>(o1.data());
    auto fx = reinterpret_cast<const hwy::float16_t*>(x.data());
    auto fo = reinterpret_cast<hwy::float16_t*>(o1.data());
    double tc = Time([&] { memcpy(o2.data(), x.data(), n * 2); }, n, reps);
    double te = Time([&] { Direct<Activation::kExp>(bx, bo, n); }, n, reps);
    double ts = Time([&] { Direct<Activation::kSilu>(bx, bo, n); }, n, reps);
    double tg = Time([&] { Direct<Activation::kGelu>(bx, bo, n); }, n, reps);
    double tgf = Time([&] { Direct<Activation::kGelu>(fx, fo, n); }, n, reps);
    Direct<Activation::kGelu>(bx, bo, n);
    double tsc = Time([&] { Scalar(tab.data(), x.data(), o2.data(), n); }, n, reps);
    bool ok1 = memcmp(o1.data(), o2.data(), n * 2) == 0;
    double tgh = Time([&] { Gather(tab.data(), x.data(), o2.data(), n); }, n, reps);
    bool ok2 = memcmp(o1.data(), o2.data(), n * 2) == 0;
    double tgr = Time([&] { GatherRaw(tab.data(), x.data(), o2.data(), n); }, n, reps);
    bool ok3 = memcmp(o1.data(), o2.data(), n * 2) == 0;
    double tgr2 = Time([&] { GatherRaw256(tab.data(), x.data(), o2.data(), n); }, n, reps);
    bool ok4 = memcmp(o1.data(), o2.data(), n * 2) == 0;
    double tpf = Time([&] { ScalarPf(tab.data(), x.data(), o2.data(), n); }, n, reps);
    bool ok5 = memcmp(o1.data(), o2.data(), n * 2) == 0;
    double tsv = Time([&] { ScalarVec(tab.data(), x.data(), o2.data(), n); }, n, reps);
    bool ok6 = memcmp(o1.data(), o2.data(), n * 2) == 0;
    printf("  scalar+pf %.3f(%d) scalar64 %.3f(%d)\n", tpf, ok5, tsv, ok6);
    printf("n=%zu copy %.3f | exp %.3f silu %.3f gelu %.3f gelu_f16 %.3f | scalar %.3f(%d) hwygather %.3f(%d) raw512 %.3f(%d) raw256 %.3f(%d) ns/elem\n",
           n, tc, te, ts, tg, tgf, tsc, ok1, tgh, ok2, tgr, ok3, tgr2, ok4);
  }
  // table build cost: gelu bf16 over 65536
  double tb = Time([&] { Direct<Activation::kGelu>(reinterpret_cast<const hwy::bfloat16_t*>(all.data()), reinterpret_cast<hwy::bfloat16_t*>(tab.data()), 65536); }, 1, 50);
  printf("gelu table build %.1f us\n", tb / 1000);
}
