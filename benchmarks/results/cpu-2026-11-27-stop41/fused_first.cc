// fused_add_rmsnorm's first pass, bfloat16, Zen 4, 1 thread: residual = bf16(x + residual), sum of the
// rounded sums squared in the library's order (4 accumulators over blocks of 4 vectors of 16).
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <algorithm>
using u16 = uint16_t;
static inline __m512 Widen(const u16* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16));
}
static inline __m512 WidenReg(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }
static const __m512i kInterleave = _mm512_set_epi16(31,15,30,14,29,13,28,12,27,11,26,10,25,9,24,8,23,7,22,6,21,5,20,4,19,3,18,2,17,1,16,0);
static inline float Finish(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
// F0: the library's loop: per vector narrow, store, widen back.
static inline __m512 Step0(const u16* x, u16* r, __m512 acc) {
  __m512 s = _mm512_add_ps(Widen(x), Widen(r));
  __m256i h = (__m256i)_mm512_cvtneps_pbh(s);
  _mm256_storeu_si256((__m256i*)r, h);
  __m512 v = WidenReg(h);
  return _mm512_fmadd_ps(v, v, acc);
}
__attribute__((noinline)) float F0(const u16* x, u16* r, size_t rows, size_t n) {
  float total = 0;
  for (size_t row = 0; row < rows; ++row) {
    const u16* xr = x + row * n; u16* rr = r + row * n;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i += 64) {
      a0 = Step0(xr + i, rr + i, a0); a1 = Step0(xr + i + 16, rr + i + 16, a1);
      a2 = Step0(xr + i + 32, rr + i + 32, a2); a3 = Step0(xr + i + 48, rr + i + 48, a3);
    }
    total += Finish(a0, a1, a2, a3);
  }
  return total;
}
// F1: natural pairs: one vcvtne2ps2bf16 and one 64-byte store per 32, widened back from the halves.
static inline void Step1(const u16* x, u16* r, __m512& acc_a, __m512& acc_b) {
  __m512 a = _mm512_add_ps(Widen(x), Widen(r)), b = _mm512_add_ps(Widen(x + 16), Widen(r + 16));
  __m512i p = (__m512i)_mm512_cvtne2ps_pbh(b, a);
  _mm512_storeu_si512(r, p);
  __m512 va = WidenReg(_mm512_castsi512_si256(p)), vb = WidenReg(_mm512_extracti64x4_epi64(p, 1));
  acc_a = _mm512_fmadd_ps(va, va, acc_a); acc_b = _mm512_fmadd_ps(vb, vb, acc_b);
}
__attribute__((noinline)) float F1(const u16* x, u16* r, size_t rows, size_t n) {
  float total = 0;
  for (size_t row = 0; row < rows; ++row) {
    const u16* xr = x + row * n; u16* rr = r + row * n;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i += 64) { Step1(xr + i, rr + i, a0, a1); Step1(xr + i + 32, rr + i + 32, a2, a3); }
    total += Finish(a0, a1, a2, a3);
  }
  return total;
}
// F3: split loads, sums narrowed together and put in order by vpermw, stored, widened back in order.
static inline void Step3(const u16* x, u16* r, __m512& acc_a, __m512& acc_b) {
  const __m512i hi = _mm512_set1_epi32(0xFFFF0000);
  __m512i xv = _mm512_loadu_si512(x), rv = _mm512_loadu_si512(r);
  __m512 e = _mm512_add_ps(_mm512_castsi512_ps(_mm512_slli_epi32(xv, 16)), _mm512_castsi512_ps(_mm512_slli_epi32(rv, 16)));
  __m512 d = _mm512_add_ps(_mm512_castsi512_ps(_mm512_and_si512(xv, hi)), _mm512_castsi512_ps(_mm512_and_si512(rv, hi)));
  __m512i p = _mm512_permutexvar_epi16(kInterleave, (__m512i)_mm512_cvtne2ps_pbh(d, e));
  _mm512_storeu_si512(r, p);
  __m512 va = WidenReg(_mm512_castsi512_si256(p)), vb = WidenReg(_mm512_extracti64x4_epi64(p, 1));
  acc_a = _mm512_fmadd_ps(va, va, acc_a); acc_b = _mm512_fmadd_ps(vb, vb, acc_b);
}
__attribute__((noinline)) float F3(const u16* x, u16* r, size_t rows, size_t n) {
  float total = 0;
  for (size_t row = 0; row < rows; ++row) {
    const u16* xr = x + row * n; u16* rr = r + row * n;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i += 64) { Step3(xr + i, rr + i, a0, a1); Step3(xr + i + 32, rr + i + 32, a2, a3); }
    total += Finish(a0, a1, a2, a3);
  }
  return total;
}
int main() {
  const size_t n = 4096;
  using Fn = float (*)(const u16*, u16*, size_t, size_t);
  struct { const char* name; Fn fn; } fns[] = {{"F0 now", F0}, {"F1 pairs", F1}, {"F3 split+vpermw", F3}};
  for (size_t rows : {16, 128, 1024}) {
    std::vector<u16> x(rows * n), r0(rows * n), r(rows * n), ref(rows * n);
    for (size_t i = 0; i < x.size(); ++i) { x[i] = 0x3F80 + (i * 7 % 127); r0[i] = 0x3E00 + (i * 13 % 255); }
    r = r0; float t0 = F0(x.data(), r.data(), rows, n); ref = r;
    for (auto& f : fns) { r = r0; float t = f.fn(x.data(), r.data(), rows, n); if (t != t0 || r != ref) printf("%s differs (%g vs %g)\n", f.name, t, t0); }
    for (int pass = 0; pass < 3; ++pass) {
      printf("rows %4zu pass %d:", rows, pass);
      for (auto& f : fns) {
        double best = 1e30;
        for (int rep = 0; rep < 15; ++rep) {
          r = r0;
          auto a = std::chrono::steady_clock::now();
          volatile float s = f.fn(x.data(), r.data(), rows, n); (void)s;
          auto b = std::chrono::steady_clock::now();
          best = std::min(best, std::chrono::duration<double, std::nano>(b - a).count());
        }
        printf("  %s %.3f", f.name, best / (rows * n));
      }
      printf("  (ns/element)\n");
    }
  }
}
