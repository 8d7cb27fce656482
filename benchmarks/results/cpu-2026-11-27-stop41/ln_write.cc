// layernorm and rmsnorm, bfloat16 rows of 4096 with bfloat16 weight (and bias), 1 thread: the library's
// vector loop against split pairs, both with the subnormal checks the library makes (layernorm: every
// vector or pair; rmsnorm: proven-normal rows, none). Portable AVX-512 (x86-64-v4 + AVX512-BF16).
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
using u16 = uint16_t;
static inline __m512 Widen(const u16* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16));
}
static inline __m512 WidenReg(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }
static const __m512i kInterleave = _mm512_set_epi16(31,15,30,14,29,13,28,12,27,11,26,10,25,9,24,8,23,7,22,6,21,5,20,4,19,3,18,2,17,1,16,0);
static const __m512i kHi = _mm512_set1_epi32(0xFFFF0000);
static inline __m512 Even(__m512i v) { return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)); }
static inline __m512 Odd(__m512i v) { return _mm512_castsi512_ps(_mm512_and_si512(v, kHi)); }
static inline float Sum(const u16* x, size_t n, float sub, bool square) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, m = _mm512_set1_ps(sub);
  for (size_t i = 0; i < n; i += 64) {
    __m512 v0 = _mm512_sub_ps(Widen(x + i), m), v1 = _mm512_sub_ps(Widen(x + i + 16), m);
    __m512 v2 = _mm512_sub_ps(Widen(x + i + 32), m), v3 = _mm512_sub_ps(Widen(x + i + 48), m);
    if (square) { a0 = _mm512_fmadd_ps(v0, v0, a0); a1 = _mm512_fmadd_ps(v1, v1, a1); a2 = _mm512_fmadd_ps(v2, v2, a2); a3 = _mm512_fmadd_ps(v3, v3, a3); }
    else { a0 = _mm512_add_ps(a0, v0); a1 = _mm512_add_ps(a1, v1); a2 = _mm512_add_ps(a2, v2); a3 = _mm512_add_ps(a3, v3); }
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
static inline bool AnySub(__m512 a) { return _mm512_fpclass_ps_mask(a, 0x20) != 0; }
__attribute__((noinline)) void LnVector(const u16* x, const u16* w, const u16* b, u16* o, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    const float mean = Sum(xr, n, 0, false) / n, rstd = 1.0f / std::sqrt(Sum(xr, n, mean, true) / n + 1e-5f);
    const __m512 mv = _mm512_set1_ps(mean), rv = _mm512_set1_ps(rstd);
    for (size_t i = 0; i < n; i += 16) {
      __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_sub_ps(Widen(xr + i), mv), rv), Widen(w + i), Widen(b + i));
      if (__builtin_expect(AnySub(y), 0)) { orow[i] = 1; continue; }
      _mm256_storeu_si256((__m256i*)(orow + i), (__m256i)_mm512_cvtneps_pbh(y));
    }
  }
}
__attribute__((noinline)) void LnSplit(const u16* x, const u16* w, const u16* b, u16* o, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    const float mean = Sum(xr, n, 0, false) / n, rstd = 1.0f / std::sqrt(Sum(xr, n, mean, true) / n + 1e-5f);
    const __m512 mv = _mm512_set1_ps(mean), rv = _mm512_set1_ps(rstd);
    for (size_t i = 0; i < n; i += 32) {
      __m512i xv = _mm512_loadu_si512(xr + i), wv = _mm512_loadu_si512(w + i), bv = _mm512_loadu_si512(b + i);
      __m512 e = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_sub_ps(Even(xv), mv), rv), Even(wv), Even(bv));
      __m512 d = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_sub_ps(Odd(xv), mv), rv), Odd(wv), Odd(bv));
      if (__builtin_expect((_mm512_fpclass_ps_mask(e, 0x20) | _mm512_fpclass_ps_mask(d, 0x20)) != 0, 0)) { orow[i] = 1; continue; }
      _mm512_storeu_si512(orow + i, _mm512_permutexvar_epi16(kInterleave, (__m512i)_mm512_cvtne2ps_pbh(d, e)));
    }
  }
}
__attribute__((noinline)) void RmsVector(const u16* x, const u16* w, const u16*, u16* o, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    const __m512 inv = _mm512_set1_ps(1.0f / std::sqrt(Sum(xr, n, 0, true) / n + 1e-6f));
    for (size_t i = 0; i < n; i += 16) {
      __m512 v = WidenReg((__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(Widen(xr + i), inv)));
      _mm256_storeu_si256((__m256i*)(orow + i), (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(v, Widen(w + i))));
    }
  }
}
__attribute__((noinline)) void RmsSplit(const u16* x, const u16* w, const u16*, u16* o, size_t rows, size_t n) {
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    const __m512 inv = _mm512_set1_ps(1.0f / std::sqrt(Sum(xr, n, 0, true) / n + 1e-6f));
    for (size_t i = 0; i < n; i += 32) {
      __m512i xv = _mm512_loadu_si512(xr + i), wv = _mm512_loadu_si512(w + i);
      __m512i rr = _mm512_permutexvar_epi16(kInterleave, (__m512i)_mm512_cvtne2ps_pbh(_mm512_mul_ps(Odd(xv), inv), _mm512_mul_ps(Even(xv), inv)));
      __m512 e = _mm512_mul_ps(Even(rr), Even(wv)), d = _mm512_mul_ps(Odd(rr), Odd(wv));
      _mm512_storeu_si512(orow + i, _mm512_permutexvar_epi16(kInterleave, (__m512i)_mm512_cvtne2ps_pbh(d, e)));
    }
  }
}
__attribute__((noinline)) void Copy(const u16* x, const u16*, const u16*, u16* o, size_t rows, size_t n) { memcpy(o, x, rows * n * 2); }
int main() {
  const size_t n = 4096;
  using Fn = void (*)(const u16*, const u16*, const u16*, u16*, size_t, size_t);
  for (size_t rows : {16, 128, 1024}) {
    std::vector<u16> x(rows * n), w(n), b(n), o(rows * n), ref(rows * n);
    uint32_t s = 1;
    auto rnd = [&] { s = s * 1664525 + 1013904223; return (float)((s >> 8) & 0xFFFF) / 65536.0f * 4 - 2; };
    auto bf = [](float f) { uint32_t u; memcpy(&u, &f, 4); return (u16)((u + 0x7FFF + ((u >> 16) & 1)) >> 16); };
    for (auto& v : x) v = bf(rnd());
    for (auto& v : w) v = bf(rnd());
    for (auto& v : b) v = bf(rnd());
    struct { const char* name; Fn fn; } pairs[2][2] = {{{"ln vector", LnVector}, {"ln split", LnSplit}}, {{"rms vector", RmsVector}, {"rms split", RmsSplit}}};
    for (auto& p : pairs) {
      p[0].fn(x.data(), w.data(), b.data(), ref.data(), rows, n); p[1].fn(x.data(), w.data(), b.data(), o.data(), rows, n);
      if (memcmp(o.data(), ref.data(), o.size() * 2)) printf("%s: MISMATCH\n", p[1].name);
    }
    for (int pass = 0; pass < 5; ++pass) {
      printf("rows %4zu pass %d:", rows, pass);
      Fn fns[] = {LnVector, LnSplit, RmsVector, RmsSplit, Copy};
      const char* names[] = {"ln vector", "ln split", "rms vector", "rms split", "memcpy"};
      for (int f = 0; f < 5; ++f) {
        double best = 1e30;
        for (int rep = 0; rep < 15; ++rep) {
          auto t0 = std::chrono::steady_clock::now();
          fns[f](x.data(), w.data(), b.data(), o.data(), rows, n);
          auto t1 = std::chrono::steady_clock::now();
          best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
        }
        printf("  %s %.3f", names[f], best / (rows * n));
      }
      printf("  (ns/element)\n");
    }
  }
}
