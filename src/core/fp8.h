// float32 -> float8_e4m3fn, bit-equal to torch's `.to(torch.float8_e4m3fn)`
// (c10::Float8_e4m3fn(float)): round to nearest even, subnormals included,
// NaN -> 0x7f with the input's sign. Shared by the CUDA kernels and the
// scalar checks; the Highway kernels get the same bits another way
// (src/cpu/fp8-inl.h, checked against this on every float32 by
// tools/check-fp8-cpu.cc). The quant norms clamp to +-448 (the largest finite
// e4m3fn) first, so what the conversion does past 448 never matters there.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define HETKERN_HOST_DEVICE __host__ __device__
#else
#define HETKERN_HOST_DEVICE
#endif

namespace hetkern {

// The largest finite float8_e4m3fn, the quant norms' clamp bound.
constexpr float kE4M3Max = 448.0f;

// The steps, in float32 bit patterns of |f|:
//   >= 480 (and inf, NaN): NaN (0x7f).
//   < 2^-6 (e4m3's smallest normal): adding 2^14 leaves |f| rounded to a
//     multiple of 2^-9 (e4m3's subnormal step) in the float adder, by the
//     FPU's own round-to-nearest-even; the low bits are the e4m3 code.
//   else: rebias the exponent (127 -> 7) and round the 23-bit mantissa to 3
//     bits to nearest even by adding 0x7ffff plus the lowest kept bit.
inline constexpr uint32_t kE4M3NanThreshold = 0x43f00000u;  // 480.0f
inline constexpr uint32_t kE4M3MinNormal = 121u << 23;      // 2^-6
inline constexpr uint32_t kE4M3DenormMagic = 141u << 23;    // 2^14
inline constexpr uint32_t kE4M3RebiasRound = ((7u - 127u) << 23) + 0x7ffffu;

HETKERN_HOST_DEVICE inline uint8_t F32ToE4M3Bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  const uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  uint32_t result;
  if (bits >= kE4M3NanThreshold) {
    result = 0x7f;
  } else if (bits < kE4M3MinNormal) {
    const uint32_t magic_bits = kE4M3DenormMagic;  // a local: device code takes no host address
    float magic, a;
    memcpy(&magic, &magic_bits, sizeof(magic));
    memcpy(&a, &bits, sizeof(a));
    const float sum = a + magic;
    uint32_t sum_bits;
    memcpy(&sum_bits, &sum, sizeof(sum_bits));
    result = sum_bits - kE4M3DenormMagic;
  } else {
    const uint32_t mantissa_odd = (bits >> 20) & 1u;
    result = (bits + kE4M3RebiasRound + mantissa_odd) >> 20;
  }
  return static_cast<uint8_t>(result | (sign >> 24));
}

}  // namespace hetkern
