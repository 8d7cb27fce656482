// bfloat16 add (x + y) and scale, 1 thread: natural-order pairs (the library's MapVectors)
// against split pairs (even/odd lanes, vpermw), by working-set size.
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
static const __m512i kInterleave = _mm512_set_epi16(31,15,30,14,29,13,28,12,27,11,26,10,25,9,24,8,23,7,22,6,21,5,20,4,19,3,18,2,17,1,16,0);
static inline bool Sub(__m512 a, __m512 b) { return (_mm512_fpclass_ps_mask(a, 0x20) | _mm512_fpclass_ps_mask(b, 0x20)) != 0; }
__attribute__((noinline)) void AddPairs(const u16* x, const u16* y, u16* o, size_t n) {
  for (size_t i = 0; i + 32 <= n; i += 32) {
    __m512 a = _mm512_add_ps(Widen(x + i), Widen(y + i)), b = _mm512_add_ps(Widen(x + i + 16), Widen(y + i + 16));
    if (__builtin_expect(Sub(a, b), 0)) { o[i] = 1; continue; }
    _mm512_storeu_si512(o + i, (__m512i)_mm512_cvtne2ps_pbh(b, a));
  }
}
__attribute__((noinline)) void AddSplit(const u16* x, const u16* y, u16* o, size_t n) {
  const __m512i hi = _mm512_set1_epi32(0xFFFF0000);
  for (size_t i = 0; i + 32 <= n; i += 32) {
    __m512i xv = _mm512_loadu_si512(x + i), yv = _mm512_loadu_si512(y + i);
    __m512 e = _mm512_add_ps(_mm512_castsi512_ps(_mm512_slli_epi32(xv, 16)), _mm512_castsi512_ps(_mm512_slli_epi32(yv, 16)));
    __m512 d = _mm512_add_ps(_mm512_castsi512_ps(_mm512_and_si512(xv, hi)), _mm512_castsi512_ps(_mm512_and_si512(yv, hi)));
    if (__builtin_expect(Sub(e, d), 0)) { o[i] = 1; continue; }
    _mm512_storeu_si512(o + i, _mm512_permutexvar_epi16(kInterleave, (__m512i)_mm512_cvtne2ps_pbh(d, e)));
  }
}
__attribute__((noinline)) void ScalePairs(const u16* x, const u16*, u16* o, size_t n) {
  const __m512 f = _mm512_set1_ps(1.7f);
  for (size_t i = 0; i + 32 <= n; i += 32) {
    __m512 a = _mm512_mul_ps(Widen(x + i), f), b = _mm512_mul_ps(Widen(x + i + 16), f);
    if (__builtin_expect(Sub(a, b), 0)) { o[i] = 1; continue; }
    _mm512_storeu_si512(o + i, (__m512i)_mm512_cvtne2ps_pbh(b, a));
  }
}
__attribute__((noinline)) void ScaleSplit(const u16* x, const u16*, u16* o, size_t n) {
  const __m512i hi = _mm512_set1_epi32(0xFFFF0000);
  const __m512 f = _mm512_set1_ps(1.7f);
  for (size_t i = 0; i + 32 <= n; i += 32) {
    __m512i xv = _mm512_loadu_si512(x + i);
    __m512 e = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_slli_epi32(xv, 16)), f);
    __m512 d = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_and_si512(xv, hi)), f);
    if (__builtin_expect(Sub(e, d), 0)) { o[i] = 1; continue; }
    _mm512_storeu_si512(o + i, _mm512_permutexvar_epi16(kInterleave, (__m512i)_mm512_cvtne2ps_pbh(d, e)));
  }
}
__attribute__((noinline)) void Copy(const u16* x, const u16*, u16* o, size_t n) { memcpy(o, x, n * 2); }
int main() {
  using Fn = void (*)(const u16*, const u16*, u16*, size_t);
  struct { const char* name; Fn fn; } fns[] = {{"add pairs", AddPairs}, {"add split", AddSplit}, {"scale pairs", ScalePairs}, {"scale split", ScaleSplit}, {"memcpy", Copy}};
  for (size_t n : {16384, 262144, 1048576, 4194304}) {
    std::vector<u16> x(n), y(n), o(n), r(n);
    for (size_t i = 0; i < n; ++i) { x[i] = 0x3F80 + (i * 7 % 127); y[i] = 0x4000 + (i * 13 % 127); }
    AddPairs(x.data(), y.data(), r.data(), n); AddSplit(x.data(), y.data(), o.data(), n);
    if (memcmp(o.data(), r.data(), n * 2)) printf("add mismatch\n");
    ScalePairs(x.data(), y.data(), r.data(), n); ScaleSplit(x.data(), y.data(), o.data(), n);
    if (memcmp(o.data(), r.data(), n * 2)) printf("scale mismatch\n");
    for (int pass = 0; pass < 3; ++pass) {
      printf("n %8zu pass %d:", n, pass);
      for (auto& f : fns) {
        double best = 1e30;
        for (int rep = 0; rep < 21; ++rep) {
          auto t0 = std::chrono::steady_clock::now();
          f.fn(x.data(), y.data(), o.data(), n);
          auto t1 = std::chrono::steady_clock::now();
          best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
        }
        printf("  %s %.4f", f.name, best / n);
      }
      printf("  (ns/element)\n");
    }
  }
}
