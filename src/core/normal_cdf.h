// Copyright (c) hetkern developers. SPDX-License-Identifier: Apache-2.0
//
// GELU's x * Phi(x) (Phi the standard normal CDF) in float32, one formula for
// the Highway kernels (src/cpu/activation-inl.h) and the CUDA kernels
// (src/cuda/activation.cu); the CPU's 16-lane AVX-512 targets read a table of
// polynomials instead (src/cpu/activation-tables.h):
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
// (then the rounding stays within 1 ulp), so they drop the central branch:
// the tail formula with kWhole16Bit, fitted over all of |x| in [0, 20] (u in
// [1/8, 1]; minimax relative error of Q 3.2e-6 against float64 erfc, float32
// coefficients), is accurate enough at x = 0 too, where Q = 1/2.
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

// The tail form over every |x| in [0, 20] (u in [1/8, 1]) to float32
// accuracy: degree 10, relative error of Q 4.5e-9. The CUDA float32 kernel
// takes it instead of the two branches (src/cuda/activation.cuh says why).
HETKERN_NORMAL_CDF_TABLE kWhole[] = {
    0.020504970103502274f, -0.11365668475627899f,  0.24487361311912537f, -0.23318234086036682f,
    0.07128577679395676f,  -0.026719236746430397f, 0.046781301498413086f, 0.0884154886007309f,
    0.12242557108402252f,  0.13964226841926575f,   0.1396292746067047f};

HETKERN_NORMAL_CDF_TABLE kWhole16Bit[] = {0.038767337799072266f, -0.16465988755226135f,
                                        0.18479253351688385f,  0.026366176083683968f,
                                        0.13712948560714722f,  0.1378922313451767f,
                                        0.13971051573753357f};

}  // namespace normal_cdf
}  // namespace hetkern
