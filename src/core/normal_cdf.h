// Copyright (c) hetkern developers. SPDX-License-Identifier: Apache-2.0
//
// GELU's x * Phi(x) (Phi the standard normal CDF) in float32, one formula for
// the Highway kernels (src/cpu/activation-inl.h) and the CUDA kernels
// (src/cuda/activation.cu):
//   |x| <= kCentralBound (Phi = 1/4 .. 3/4): Phi = 1/2 + x * P(x^2);
//   |x| >  kCentralBound: Q = Phi(-|x|) = e^(-x^2/2) * u * R(u),
//                         u = 1 / (1 + kTailSlope |x|),
// then x * Phi = (x * u R) * e^(-x^2/2) for x < 0 (the Gaussian factor last,
// so that only the result can be subnormal) and x * (1 - Q) for x > 0.
// Going through erf(x / sqrt 2) would lose tens of ulp in the tail to the
// rounding of x / sqrt 2, and 1 + erf cancels for x < 0.
//
// Coefficients (highest degree first, for Horner): least-squares fits of the
// relative error on Chebyshev nodes (tail: u over |x| in [kCentralBound, 20]),
// rounded to float32. Float32 results: fit error 2.8e-8 / 7.9e-9 (against
// mpmath). Results rounded to float16 or bfloat16 need only a relative 2^-12
// (then the rounding stays within 1 ulp), so they take the lower degrees
// (fit error 1.6e-6 / 6.7e-6 against float64 erfc): 7 fewer FMAs a value.
#pragma once

// In CUDA translation units the tables live in device memory's constant
// data: the kernels read them (after unrolling, as immediates).
#if defined(__CUDACC__)
#define HETKERN_NORMAL_CDF_TABLE static __device__ constexpr float
#else
#define HETKERN_NORMAL_CDF_TABLE inline constexpr float
#endif

namespace hetkern {
namespace normal_cdf {

inline constexpr float kCentralBound = 0.6744897501960817f;
inline constexpr float kTailSlope = 0.35f;
// |x| beyond which Q is 0 in float32 anyway; clamping there keeps x^2 finite.
inline constexpr float kTailClamp = 20.0f;

HETKERN_NORMAL_CDF_TABLE kCentral[] = {
    -8.579921995988116e-06f, 0.00011499834363348782f, -0.0011872256873175502f,
    0.009973546490073204f,   -0.06649038195610046f,   0.3989422917366028f};
HETKERN_NORMAL_CDF_TABLE kTail[] = {
    0.02931881695985794f,  -0.1578238308429718f, 0.3414244055747986f,   -0.354051798582077f,
    0.1669253557920456f,   -0.07652419060468674f, 0.06400757282972336f, 0.0845208391547203f,
    0.12297490239143372f,  0.13959869742393494f,  0.1396307498216629f};

HETKERN_NORMAL_CDF_TABLE kCentral16Bit[] = {0.00909926276654005f, -0.0663023442029953f,
                                          0.39893242716789246f};
HETKERN_NORMAL_CDF_TABLE kTail16Bit[] = {-0.059253230690956116f, 0.07225392013788223f,
                                       0.08617710322141647f,   0.12061204016208649f,
                                       0.14011842012405396f,   0.13959674537181854f};

}  // namespace normal_cdf
}  // namespace hetkern
