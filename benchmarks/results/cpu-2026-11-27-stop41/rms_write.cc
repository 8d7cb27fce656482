// rmsnorm bf16 row passes, Zen 4: where the time goes. rows x n bf16, weight bf16,
// proven-normal path (no subnormal checks), vLLM rounding (x*inv rounded to bf16 before w).
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
static inline __m256i Narrow(__m512 v) { return (__m256i)_mm512_cvtneps_pbh(v); }
static inline float Reduce(const u16* x, size_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 64) {
    __m512 v0 = Widen(x + i), v1 = Widen(x + i + 16), v2 = Widen(x + i + 32), v3 = Widen(x + i + 48);
    a0 = _mm512_fmadd_ps(v0, v0, a0); a1 = _mm512_fmadd_ps(v1, v1, a1);
    a2 = _mm512_fmadd_ps(v2, v2, a2); a3 = _mm512_fmadd_ps(v3, v3, a3);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
static inline float Inv(float ss, size_t n) { return 1.0f / std::sqrt(ss / n + 1e-6f); }
// A: the library's loop today.
__attribute__((noinline)) void A(const u16* x, const u16* w, u16* o, size_t rows, size_t n, bool write) {
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    __m512 inv = _mm512_set1_ps(Inv(Reduce(xr, n), n));
    if (!write) { orow[0] = (u16)_mm512_cvtss_f32(inv); continue; }
    for (size_t i = 0; i < n; i += 16) {
      __m512 v = _mm512_mul_ps(Widen(xr + i), inv);
      v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(Narrow(v)), 16));
      _mm256_storeu_si256((__m256i*)(orow + i), Narrow(_mm512_mul_ps(v, Widen(w + i))));
    }
  }
}
// B: weight widened once per call into float32.
__attribute__((noinline)) void B(const u16* x, const u16* w, u16* o, size_t rows, size_t n, bool) {
  std::vector<float> wf(n);
  for (size_t i = 0; i < n; i += 16) _mm512_storeu_ps(&wf[i], Widen(w + i));
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    __m512 inv = _mm512_set1_ps(Inv(Reduce(xr, n), n));
    for (size_t i = 0; i < n; i += 16) {
      __m512 v = _mm512_mul_ps(Widen(xr + i), inv);
      v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(Narrow(v)), 16));
      _mm256_storeu_si256((__m256i*)(orow + i), Narrow(_mm512_mul_ps(v, _mm512_loadu_ps(&wf[i]))));
    }
  }
}
// C: B + the result narrowed in pairs.
__attribute__((noinline)) void C(const u16* x, const u16* w, u16* o, size_t rows, size_t n, bool) {
  std::vector<float> wf(n);
  for (size_t i = 0; i < n; i += 16) _mm512_storeu_ps(&wf[i], Widen(w + i));
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    __m512 inv = _mm512_set1_ps(Inv(Reduce(xr, n), n));
    for (size_t i = 0; i < n; i += 32) {
      __m512 a = _mm512_mul_ps(Widen(xr + i), inv), b = _mm512_mul_ps(Widen(xr + i + 16), inv);
      a = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(Narrow(a)), 16));
      b = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(Narrow(b)), 16));
      a = _mm512_mul_ps(a, _mm512_loadu_ps(&wf[i])); b = _mm512_mul_ps(b, _mm512_loadu_ps(&wf[i + 16]));
      _mm512_storeu_si512(orow + i, (__m512i)_mm512_cvtne2ps_pbh(b, a));
    }
  }
}
// D: even/odd lanes: split on load (shift, and), rounded in pairs and re-interleaved
// with vpermw; weight split the same way; no buffer.
static const __m512i kInterleave = _mm512_set_epi16(31,15,30,14,29,13,28,12,27,11,26,10,25,9,24,8,23,7,22,6,21,5,20,4,19,3,18,2,17,1,16,0);
__attribute__((noinline)) void D(const u16* x, const u16* w, u16* o, size_t rows, size_t n, bool) {
  const __m512i hi = _mm512_set1_epi32(0xFFFF0000);
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    __m512 inv = _mm512_set1_ps(Inv(Reduce(xr, n), n));
    for (size_t i = 0; i < n; i += 32) {
      __m512i xv = _mm512_loadu_si512(xr + i), wv = _mm512_loadu_si512(w + i);
      __m512 e = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_slli_epi32(xv, 16)), inv);
      __m512 d = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_and_si512(xv, hi)), inv);
      __m512i rr = _mm512_permutexvar_epi16(kInterleave, (__m512i)_mm512_cvtne2ps_pbh(d, e));
      e = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_slli_epi32(rr, 16)), _mm512_castsi512_ps(_mm512_slli_epi32(wv, 16)));
      d = _mm512_mul_ps(_mm512_castsi512_ps(_mm512_and_si512(rr, hi)), _mm512_castsi512_ps(_mm512_and_si512(wv, hi)));
      _mm512_storeu_si512(orow + i, _mm512_permutexvar_epi16(kInterleave, (__m512i)_mm512_cvtne2ps_pbh(d, e)));
    }
  }
}
// E: C's arrangement, but x * inv rounded in place by integer arithmetic (no narrowing).
static inline __m512 RoundInPlace(__m512 v) {
  __m512i b = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF))), _mm512_set1_epi32(0xFFFF0000)));
}
__attribute__((noinline)) void E(const u16* x, const u16* w, u16* o, size_t rows, size_t n, bool) {
  std::vector<float> wf(n);
  for (size_t i = 0; i < n; i += 16) _mm512_storeu_ps(&wf[i], Widen(w + i));
  for (size_t r = 0; r < rows; ++r) {
    const u16* xr = x + r * n; u16* orow = o + r * n;
    __m512 inv = _mm512_set1_ps(Inv(Reduce(xr, n), n));
    for (size_t i = 0; i < n; i += 32) {
      __m512 a = RoundInPlace(_mm512_mul_ps(Widen(xr + i), inv)), b = RoundInPlace(_mm512_mul_ps(Widen(xr + i + 16), inv));
      a = _mm512_mul_ps(a, _mm512_loadu_ps(&wf[i])); b = _mm512_mul_ps(b, _mm512_loadu_ps(&wf[i + 16]));
      _mm512_storeu_si512(orow + i, (__m512i)_mm512_cvtne2ps_pbh(b, a));
    }
  }
}
// Copy of the same bytes (read x, write o).
__attribute__((noinline)) void Copy(const u16* x, const u16*, u16* o, size_t rows, size_t n, bool) {
  memcpy(o, x, rows * n * 2);
}
using Fn = void (*)(const u16*, const u16*, u16*, size_t, size_t, bool);
int main() {
  const size_t n = 4096;
  for (size_t rows : {16, 128, 1024}) {
    std::vector<u16> x(rows * n), w(n), o(rows * n), ref(rows * n);
    uint32_t s = 1;
    auto rnd = [&] { s = s * 1664525 + 1013904223; return (float)((s >> 8) & 0xFFFF) / 65536.0f * 4 - 2; };
    auto bf = [](float f) { uint32_t b; memcpy(&b, &f, 4); return (u16)((b + 0x7FFF + ((b >> 16) & 1)) >> 16); };
    for (auto& v : x) v = bf(rnd());
    for (auto& v : w) v = bf(rnd());
    A(x.data(), w.data(), ref.data(), rows, n, true);
    struct { const char* name; Fn fn; } fns[] = {{"A now", A}, {"B wf32", B}, {"C wf32+pairs", C}, {"D even/odd", D}, {"E wf32+int round+pairs", E}, {"reduce only", nullptr}, {"memcpy", Copy}};
    for (auto& f : fns) {
      if (f.fn && f.fn != Copy) { std::fill(o.begin(), o.end(), 0); f.fn(x.data(), w.data(), o.data(), rows, n, true);
        if (memcmp(o.data(), ref.data(), o.size() * 2)) printf("%s: MISMATCH\n", f.name); }
    }
    for (int pass = 0; pass < 3; ++pass) {
      printf("rows %4zu pass %d:", rows, pass);
      for (auto& f : fns) {
        double best = 1e30;
        for (int rep = 0; rep < 15; ++rep) {
          auto t0 = std::chrono::steady_clock::now();
          if (f.fn) f.fn(x.data(), w.data(), o.data(), rows, n, true); else A(x.data(), w.data(), o.data(), rows, n, false);
          auto t1 = std::chrono::steady_clock::now();
          best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
        }
        printf("  %s %.3f", f.name, best / (rows * n));
      }
      printf("  (ns/element)\n");
    }
  }
}
