// Copyright (c) hetkern developers. SPDX-License-Identifier: Apache-2.0
//
// Exhaustive checks of the CPU fp8 quant stage (src/cpu/fp8-inl.h) on the
// Highway target the compiler builds for:
//  1. F32ToE4M3Lanes against F32ToE4M3Bits(clamp(v)) (src/core/fp8.h) for
//     all 2^32 float32 bit patterns;
//  2. QuantDivisor<float>'s quotient and output stage against a division
//     and F32ToE4M3Bits for every significand of y in [1, 4) (2^24, both
//     quotient binades) with each of 192 scale significands (every 2^17-th,
//     the ends of [1, 2) and 128 random ones), the scale at 2^-64, 1 and
//     2^64 and y at the same binade and 2^11 below it: the quotient bit for
//     bit where the step is exact (2^-11 <= |quotient| < 1024), the e4m3
//     byte everywhere; then random y over the whole exponent range (zeros,
//     subnormals, inf, NaN included) and random scales, the e4m3 byte.
//     tools/check-quant-division.cu tries every pair of significands of the
//     same step on a GPU.
//
//   c++ -O2 -march=native -std=c++17 -I. -Isubprojects/highway-1.3.0 \
//       tools/check-fp8-cpu.cc -o check-fp8-cpu && ./check-fp8-cpu
// Prints the mismatch counts; exit 1 if any (a minute or two on one core).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <hwy/highway.h>

#include "src/core/fp8.h"
#include "src/cpu/fp8-inl.h"

namespace hn = hwy::HWY_NAMESPACE;
namespace cpu = hetkern::cpu::HWY_NAMESPACE;

namespace {

uint8_t ClampedE4M3(float v) {
  return hetkern::F32ToE4M3Bits(v > 448.f ? 448.f : v < -448.f ? -448.f : v);
}

// out[i] = e4m3 of in[i] / scale (or of in[i] itself if divisor is null),
// the library's way; n a multiple of the vector length.
void Quantize(const float* in, uint8_t* out, size_t n, const cpu::QuantDivisor<float>* divisor) {
  const hn::ScalableTag<float> d;
  for (size_t i = 0; i < n; i += hn::Lanes(d)) {
    const auto v = hn::LoadU(d, in + i);
    if (divisor) {
      divisor->Store(d, v, out + i);
    } else {
      cpu::StoreE4M3(d, v, out + i);
    }
  }
}

void Divide(const float* in, float* out, size_t n, const cpu::QuantDivisor<float>& divisor) {
  const hn::ScalableTag<float> d;
  for (size_t i = 0; i < n; i += hn::Lanes(d)) hn::StoreU(divisor.Quotient(d, hn::LoadU(d, in + i)), d, out + i);
}

float FromBits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t Bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  return bits;
}

}  // namespace

int main() {
  printf("target %s, fused multiply-add: %d\n", hwy::TargetName(HWY_TARGET), HWY_NATIVE_FMA);
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<float> in(kChunk), quotient(kChunk);
  std::vector<uint8_t> got(kChunk);
  uint64_t conversion_mismatches = 0;
  for (uint64_t base = 0; base < (uint64_t{1} << 32); base += kChunk) {
    for (size_t i = 0; i < kChunk; ++i) in[i] = FromBits(static_cast<uint32_t>(base + i));
    Quantize(in.data(), got.data(), kChunk, nullptr);
    for (size_t i = 0; i < kChunk; ++i) {
      if (got[i] != ClampedE4M3(in[i]) && conversion_mismatches++ < 5) {
        printf("  conversion of %08x: %02x, expected %02x\n", Bits(in[i]), got[i], ClampedE4M3(in[i]));
      }
    }
  }
  printf("conversion, all 2^32 float32: %llu mismatches\n", static_cast<unsigned long long>(conversion_mismatches));

  std::mt19937 random(2026);
  uint64_t division_mismatches = 0, divisions = 0;
  std::vector<uint32_t> scale_significands;
  for (uint32_t m = 0; m < (1u << 23); m += 1u << 17) scale_significands.push_back(m);
  scale_significands.push_back((1u << 23) - 1);
  for (int i = 0; i < 127; ++i) scale_significands.push_back(static_cast<uint32_t>(random()) & 0x7fffffu);
  for (uint32_t scale_significand : scale_significands) {
    const int exponents[][2] = {{-64, -64}, {0, 0}, {64, 64}, {-64, -75}, {0, -11}, {64, 53}};
    for (const auto& [scale_exponent, y_exponent] : exponents) {
      const float scale = FromBits((static_cast<uint32_t>(127 + scale_exponent) << 23) | scale_significand);
      const cpu::QuantDivisor<float> divisor(scale);
      for (uint32_t base = 0; base < (1u << 24); base += kChunk) {
        for (size_t i = 0; i < kChunk; ++i) {
          in[i] = FromBits((static_cast<uint32_t>(127 + y_exponent) << 23) + base + static_cast<uint32_t>(i));
        }
        Divide(in.data(), quotient.data(), kChunk, divisor);
        Quantize(in.data(), got.data(), kChunk, &divisor);
        for (size_t i = 0; i < kChunk; ++i) {
          const float want = in[i] / scale;
          const bool exact = std::fabs(want) >= 0x1p-11f && std::fabs(want) < 1024.f;
          const bool same = got[i] == ClampedE4M3(want) && (!exact || Bits(quotient[i]) == Bits(want));
          if (!same && division_mismatches++ < 5) {
            printf("  %08x / %08x: %08x (e4m3 %02x), expected %08x (%02x)\n", Bits(in[i]), Bits(scale),
                   Bits(quotient[i]), got[i], Bits(want), ClampedE4M3(want));
          }
        }
        divisions += kChunk;
      }
    }
  }
  printf("division, %llu significand pairs: %llu mismatches\n", static_cast<unsigned long long>(divisions),
         static_cast<unsigned long long>(division_mismatches));

  uint64_t sample_mismatches = 0, samples = 0;
  const float special[] = {0.f, -0.f, 1e-45f, -1e-45f, 1e-38f, 3.4e38f, -3.4e38f, INFINITY, -INFINITY, NAN};
  for (int round = 0; round < 256; ++round) {
    const float scale = round < 10 ? FromBits(static_cast<uint32_t>(random()) & 0x7fffffffu)
                                   : FromBits(((static_cast<uint32_t>(127 - 64 + random() % 129)) << 23) |
                                              (static_cast<uint32_t>(random()) & 0x7fffffu));
    const cpu::QuantDivisor<float> divisor(scale);
    for (size_t i = 0; i < kChunk; ++i) {
      in[i] = i < sizeof(special) / sizeof(special[0]) ? special[i] : FromBits(static_cast<uint32_t>(random()));
    }
    Quantize(in.data(), got.data(), kChunk, &divisor);
    for (size_t i = 0; i < kChunk; ++i) {
      const uint8_t want = ClampedE4M3(in[i] / scale);
      const bool both_nan = (got[i] & 0x7f) == 0x7f && (want & 0x7f) == 0x7f;
      if (got[i] != want && !both_nan && sample_mismatches++ < 5) {
        printf("  e4m3(%08x / %08x): %02x, expected %02x\n", Bits(in[i]), Bits(scale), got[i], want);
      }
    }
    samples += kChunk;
  }
  printf("quantised samples, whole range: %llu, %llu mismatches\n", static_cast<unsigned long long>(samples),
         static_cast<unsigned long long>(sample_mismatches));
  return conversion_mismatches + division_mismatches + sample_mismatches == 0 ? 0 : 1;
}
