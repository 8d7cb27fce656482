// Copyright (c) hetkern developers. SPDX-License-Identifier: Apache-2.0
//
// Division by the fp8 quant ops' scale: y / scale, bit-equal to torch's
// `y / scale` (div.rn.f32), without a division per element.
//
// div.rn.f32 is a reciprocal, Newton steps and a branch to a slow-path
// subroutine whose call convention costs the norm kernels registers (spills).
// The scale is one number per call, so its reciprocal r = RN(1/scale) is
// taken once; each element then costs q0 = RN(y r), the remainder
// y - q0 scale (exact through an FMA) and one correction q = RN(q0 + rem r):
// Markstein's division step, which rounds to the correctly rounded quotient.
// tools/check-quant-division.cu checks that claim exhaustively on a GPU: the
// bits of Divide(y) equal div.rn.f32's for every pair of significands
// (2^23 x 2^23, y and scale in [1, 2)). Scaling y and scale by powers of two
// scales r, q0, rem and q exactly while they stay normal, which covers every
// case where the fp8 output depends on the quotient's low bits:
//   - the step is taken where |q0| < 1024; beyond that the output clamps to
//     448 whatever the last bits (q0 is within 2 ulp of the quotient);
//   - for scale in [2^-64, 2^64] and |quotient| >= 2^-11, r, q0 and a
//     nonzero rem (a multiple of ulp(q0) ulp(scale) >= 2^-121) are normal;
//     smaller quotients give +-0 in e4m3 (below half of 2^-9), sign kept;
//   - rem is rounded toward -inf: nonzero, it is exact and so the same in
//     any rounding, and an exact zero comes out as -0, which the correction
//     adds to q0 without changing its bits, ±0 included (r > 0: negative
//     scales take float64), where a +0 would turn q0 = -0 into +0;
//   - inf and NaN y skip the step (|q0| < 1024 is false for them).
// Other scales (negative, 0, subnormal, huge, inf, NaN) take float64: y
// times the float64 reciprocal is within 2^-52 (relative) of y / scale, and
// a quotient of two floats is never nearer than 2^-49 to a float rounding
// midpoint, so rounding it to float gives the correctly rounded quotient;
// zeros, inf and NaN come out as division gives them. No div.rn sequence is
// inlined at all: it would double the code of every quant kernel (latency
// at decode sizes). float64 compute (float64 x) divides.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

namespace hetkern::cuda {

// Which of QuantScale<float>::Divide's two ways a caller takes: chosen by a
// test a value (kEither), or known for a whole output pass (WithDivision).
enum class Division { kEither, kByReciprocal, kWide };
template <Division kWay>
using DivisionTag = std::integral_constant<Division, kWay>;

template <class C>
struct QuantScale {
  C scale;
  __device__ explicit QuantScale(float s) : scale(static_cast<C>(s)) {}
  template <Division = Division::kEither>
  __device__ __forceinline__ C Divide(C y) const {
    return y / scale;
  }
  template <class Fn>
  __device__ __forceinline__ void WithDivision(Fn&& fn) const {
    fn(DivisionTag<Division::kEither>{});
  }
};

template <>
struct QuantScale<float> {
  float scale;
  float reciprocal;
  double wide_reciprocal;
  bool by_reciprocal;  // scale in [2^-64, 2^64]: the step's operands stay normal, r > 0
  __device__ explicit QuantScale(float s) {
    scale = s;
    reciprocal = __frcp_rn(s);  // correctly rounded (RN(1 / s)), once per thread
    by_reciprocal = s >= 0x1p-64f && s <= 0x1p64f;
    // Only the other scales need it: a float64 division is dozens of
    // instructions, a share of the work of a thread that quantises 8 values
    // (H100, bfloat16, graph replay, against taking it always: rmsnorm_quant
    // 16384x1024 25.9 us / 26.7, layernorm_quant 4096x8192 56.3 / 58.2;
    // benchmarks/results/h100-2026-11-25-rows, run 4).
    wide_reciprocal = by_reciprocal ? 0.0 : 1.0 / static_cast<double>(s);
  }
  // y / scale, correctly rounded. kEither tests by_reciprocal (a branch a
  // value, uniform across the grid); the other ways are for callers that
  // tested it once (WithDivision).
  template <Division kWay = Division::kEither>
  __device__ __forceinline__ float Divide(float y) const {
    const bool wide = kWay == Division::kEither ? !by_reciprocal : kWay == Division::kWide;
    if (wide) return __double2float_rn(static_cast<double>(y) * wide_reciprocal);
    const float q0 = __fmul_rn(y, reciprocal);  // no contraction into the FMA below
    const float rem = __fmaf_rd(-q0, scale, y);
    return fabsf(q0) < 1024.f ? __fmaf_rn(rem, reciprocal, q0) : q0;
  }
  // fn(DivisionTag<way>{}) with this scale's way: an output pass that
  // divides every value of a row tests by_reciprocal once instead of once a
  // value.
  template <class Fn>
  __device__ __forceinline__ void WithDivision(Fn&& fn) const {
    if (by_reciprocal) return fn(DivisionTag<Division::kByReciprocal>{});
    fn(DivisionTag<Division::kWide>{});
  }
};

}  // namespace hetkern::cuda
