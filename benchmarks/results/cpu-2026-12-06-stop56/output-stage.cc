// The quant norms' write pass for bfloat16 x and weight, in cache (4096
// values, best of 5000 calls, ns a value), with three divisions by the scale
// before the e4m3 conversion of src/cpu/fp8-inl.h: hn::Div (kMode 0), the
// library's QuantDivisor::Store (1: the Markstein step, sign and NaN from y)
// and the step with a |q0| < 1024 guard (2: stop 56's first version).
//   c++ -O2 -march=native -std=c++17 -I. -Isubprojects/highway-1.3.0 \
//       benchmarks/results/cpu-2026-12-06-stop56/output-stage.cc -o output-stage
#include <stdio.h>
#include <chrono>
#include <vector>
#include <algorithm>
#include <hwy/highway.h>
#include "src/cpu/fp8-inl.h"
namespace hn = hwy::HWY_NAMESPACE;
using namespace hetkern::cpu::HWY_NAMESPACE;
float g_s = 0.37f;
template <int kMode>
HWY_NOINLINE void Run(const hwy::bfloat16_t* x, const hwy::bfloat16_t* w, uint8_t* out, size_t n, float inv) {
  const hn::ScalableTag<float> d;
  const hn::Rebind<hwy::bfloat16_t, decltype(d)> dh;
  const QuantDivisor<float> div(g_s);
  const float s = g_s;
  for (size_t i = 0; i < n; i += hn::Lanes(d)) {
    auto y = hn::Mul(hn::Mul(hn::PromoteTo(d, hn::LoadU(dh, x + i)), hn::Set(d, inv)), hn::PromoteTo(d, hn::LoadU(dh, w + i)));
    if (kMode == 0) StoreE4M3(d, hn::Div(y, hn::Set(d, s)), out + i);
    if (kMode == 1) div.Store(d, y, out + i);
    if (kMode == 2) {
      const auto r = hn::Set(d, div.reciprocal);
      const auto q0 = hn::Mul(y, r);
      const auto rem = hn::MulSub(q0, hn::Set(d, s), y);
      StoreE4M3(d, hn::IfThenElse(hn::Lt(hn::Abs(q0), hn::Set(d, 1024.f)), hn::NegMulAdd(rem, r, q0), q0), out + i);
    }
  }
}
template <int kMode> double Time(const hwy::bfloat16_t* x, const hwy::bfloat16_t* w, uint8_t* o, size_t n) {
  double best = 1e9;
  for (int rep = 0; rep < 5000; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    Run<kMode>(x, w, o, n, 0.9f);
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  return best / n;
}
int main() {
  size_t n = 4096;
  std::vector<hwy::bfloat16_t> x(n), w(n); std::vector<uint8_t> o(n);
  for (size_t i = 0; i < n; ++i) { x[i] = hwy::BF16FromF32(((i * 2654435761u) % 1000) / 7.0f - 70.0f); w[i] = hwy::BF16FromF32(1.0f + (i % 7) * 0.1f); }
  printf("%s\n", hwy::TargetName(HWY_TARGET));
  for (int k = 0; k < 3; ++k)
    printf("div %.3f  store(no guard) %.3f  guard %.3f ns/value\n", Time<0>(x.data(), w.data(), o.data(), n), Time<1>(x.data(), w.data(), o.data(), n), Time<2>(x.data(), w.data(), o.data(), n));
}
