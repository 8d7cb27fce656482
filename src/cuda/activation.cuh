// Copyright (c) hetkern developers. SPDX-License-Identifier: Apache-2.0
//
// The activation functions on the device, act(x) in the compute type
// (ActivationOp), shared by the kernels of src/cuda/activation.cu and by
// tools/check-activations.cu, which times them and checks their accuracy.
#pragma once

#include <cfloat>
#include <cstddef>
#include <type_traits>

#include "src/core/args.h"
#include "src/core/normal_cdf.h"

namespace hetkern {
namespace cuda {

// The accurate libdevice functions (never the __expf-style intrinsics) of
// both compute types. NaN propagates through all of them.
__device__ inline float Exp(float x) { return expf(x); }
__device__ inline double Exp(double x) { return ::exp(x); }
__device__ inline float Tanh(float x) { return tanhf(x); }
__device__ inline double Tanh(double x) { return ::tanh(x); }

// For results rounded to float16/bfloat16, where a relative error below
// 2^-12 cannot move the rounding by more than 1 ulp, the hardware's
// approximations instead: ex2.approx (relative 2^-22; flushes subnormal
// results, so callers keep its result normal) and rcp.approx (1 ulp). They
// make the 16-bit activations as cheap as a copy (H100, 2^26 values, against
// a copy of the same bytes: bfloat16 silu 0.99 -> 1.00, gelu_tanh 0.94 ->
// 1.00, erf-GELU 0.66 -> 0.86; accuracy checked on every 16-bit input by
// tools/check-activations.cu: correctly rounded, 0.5 ulp).
__device__ __forceinline__ float Exp2Approx(float a) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}
__device__ __forceinline__ float ReciprocalApprox(float a) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}
// 1 / b for normal b (no special cases), within about an ulp: rcp.approx
// and one Newton step, where __frcp_rn's correctly rounded sequence costs a
// float32 kernel its place at the copy limit.
__device__ __forceinline__ float ReciprocalRefined(float b) {
  const float r = ReciprocalApprox(b);
  return fmaf(r, fmaf(-b, r, 1.0f), r);
}
constexpr float kLog2E = 1.4426950408889634f;

template <size_t N>
__device__ __forceinline__ float Horner(const float (&c)[N], float x) {
  float p = c[0];
#pragma unroll
  for (size_t i = 1; i < N; ++i) p = fmaf(p, x, c[i]);
  return p;
}

// tanh for results rounded to float16/bfloat16: below |x| = 0.375,
// x P(x^2) (a minimax fit, relative error 2^-24); beyond, 1 - 2e / (1 + e)
// with e = e^(-2|x|) on the fast ex2 and rcp (no cancellation there: the
// result exceeds 0.35, the relative error stays near 2^-21), its sign from x.
// Every 16-bit input comes out correctly rounded (tools/check-activations.cu).
// libdevice's tanhf had bfloat16 tanh at 0.92 of copy (H200, 2^26 values).
__device__ __forceinline__ float Tanh16Bit(float x) {
  constexpr float kSmall[] = {-0x1.8b7242p-5f, 0x1.10110cp-3f, -0x1.5551c6p-2f, 0x1.fffffep-1f};
  const float t = fabsf(x);
  const float e = Exp2Approx(t * (-2.0f * kLog2E));
  const float large = copysignf(fmaf(-2.0f * e, ReciprocalApprox(1.0f + e), 1.0f), x);
  return t < 0.375f ? x * Horner(kSmall, x * x) : large;  // NaN: large's NaN
}

// e^(-(hi + lo) / 2) for hi + lo = t^2 exactly (t <= 20): libdevice expf's
// own steps (2^j from a saturated multiply-add and a shift, 2^f on the MUFU
// unit; results down into the subnormals take one rounding) with the -1/2
// folded into its constants and lo into the reduced argument: 9
// instructions, where expf(hi * -0.5f) * (1 - lo / 2) took 11.
__device__ __forceinline__ float GaussOfSquare(float hi, float lo) {
  // expf's constants (its SASS, nvcc 13): log2(e) = hi + lo, and hi / 252
  constexpr float kLog2EHi = 0x1.715476p+0f, kLog2ELo = 0x1.4ae0c0p-26f;
  constexpr float kLog2EHiBy252 = 0x1.77313ap-8f;
  // 1.5 * 2^23 + floor(a log2 e) + 127, the exponent saturated to [1, 253]
  const float biased =
      __fmaf_rd(__saturatef(fmaf(hi, -0.5f * kLog2EHiBy252, 0.5f)), 252.0f, 12582913.0f);
  const float j = biased - 12583039.0f;
  const float two_j = __int_as_float(__float_as_int(biased) << 23);
  float f = fmaf(hi, -0.5f * kLog2EHi, -j);
  f = fmaf(hi, -0.5f * kLog2ELo, f);
  f = fmaf(lo, -0.5f * kLog2EHi, f);
  return Exp2Approx(f) * two_j;
}

// GELU's x * Phi(x) with the CPU kernels' tail form (src/core/normal_cdf.h),
// Q = Phi(-|x|) = e^(-x^2/2) u R(u), u = 1 / (1 + 0.35 |x|); the product
// is formed before the Gaussian factor, so it stays accurate down into the
// subnormals without a wider type.
// float32: one fit over every |x| (kWhole) instead of the CPU's central
// branch and tail. On an H200 (4.8 TB/s) the kernel is bound by issue, and
// both branches took 49.5 SASS instructions a value; one form, with
// GaussOfSquare and a Newton-refined reciprocal, takes 33 (2^28 values, 4
// input sets, graph replay: 622.9 -> 520.6 us with two packs a thread,
// torch 504.9). Its price is near 0, where u's rounding reaches Q times
// 2.3: over every float32 input the largest error is 6.71 ulp at x = -0.34
// (two branches: 6.75 at -1.83, and 2.60 for |x| <= 0.6745), within the
// 8-ulp bound (docs/activation.md; tools/check-activations.cu).
// 16-bit results: the fit to 2^-12 (kWhole16Bit), and the hardware
// approximations. e^(-x^2/2) is taken times 2^64 (normal down to |x| =
// 16.3, past bfloat16's last nonzero GELU at -14.4) and scaled back in the
// last product.
template <bool k16Bit>
__device__ inline float XNormalCdf(float x) {
  namespace cdf = normal_cdf;
  const float tc = fminf(fabsf(x), cdf::kTailClamp);  // fminf(NaN, c) = c: x keeps the NaN
  const float sq_hi = tc * tc;
  const float sq_lo = fmaf(tc, tc, -sq_hi);  // x^2 = hi + lo exactly
  const float denominator = fmaf(tc, cdf::kTailSlope, 1.0f);
  if constexpr (k16Bit) {
    const float gauss =  // e^(-x^2/2) * 2^64
        Exp2Approx(fmaf(sq_hi, -0.5f * kLog2E, 64.0f)) * fmaf(sq_lo, -0.5f, 1.0f);
    const float u = ReciprocalApprox(denominator);
    const float ur = u * Horner(cdf::kWhole16Bit, u);
    return x < 0.0f ? ((x * ur) * gauss) * 0x1p-64f : x * fmaf(-gauss * 0x1p-64f, ur, 1.0f);
  } else {
    const float gauss = GaussOfSquare(sq_hi, sq_lo);
    const float u = ReciprocalRefined(denominator);  // denominator in [1, 8]
    const float ur = u * Horner(cdf::kWhole, u);
    return x < 0.0f ? (x * ur) * gauss : x * fmaf(-gauss, ur, 1.0f);
  }
}
// float64 has no wider type; its bound (docs/activation.md) allows the
// subnormal Phi below x = -37.5.
__device__ inline double XNormalCdfDouble(double x) { return x * normcdf(x); }

// a / b for b in [1, 2] (finite a, or NaN): rcp.approx refined by a Newton
// step, then one residual correction (Markstein), which gives the correctly
// rounded quotient but for near-ties, as the CPU's DivBounded. IEEE division
// (div.rn.f32) would bring a slow-path call whose registers spill under the
// streaming kernel's 32-register bound.
__device__ __forceinline__ float QuotientBounded(float a, float b) {
  const float r = ReciprocalRefined(b);
  const float q = a * r;
  return fmaf(r, fmaf(-b, q, a), q);
}
// The same quotient for any a: the residual is taken as b q - a, so that a
// zero quotient keeps a's sign (-0 + 0 would give +0), and its NaN at an
// infinite a (inf - inf) is clamped (fminf(NaN, c) = c), so that inf / b
// stays inf; NaN a gives NaN through q. Same bits as QuotientBounded
// elsewhere, one instruction more.
__device__ __forceinline__ float QuotientOfAny(float a, float b) {
  const float r = ReciprocalRefined(b);
  const float q = a * r;
  return fmaf(-r, fminf(fmaf(b, q, -a), FLT_MAX), q);
}

// x * sigmoid(z) = x / (1 + e^-z), accurate for tiny results and without
// overflow: with h = e^(-|z|/2), (x h) h / (1 + h^2) for z < 0 (h stays
// normal while the result is representable, so the fast ex2 may take it).
// float32 divides through QuotientOfAny, not IEEE division, whose slow-path
// call had two packs a thread spill: over every float32 input the same
// largest errors (silu 6.26 ulp, gelu_tanh 3.18 (1 + |z|)); H200, graph
// replay, 4 input sets, us: gelu_tanh 2^28 values 534.9 -> 522.0 (torch
// 507.0), 2^20 2.90 -> 2.51; silu 2^28 518.7 -> 507.3 (torch 507.1), 2^20
// 2.64 -> 2.46 (benchmarks/results/h200-2026-11-28-stop47, run 3).
template <bool k16Bit, class C>
__device__ C XSigmoid(C x, C z) {
  if constexpr (k16Bit) {
    const float h = Exp2Approx(fabsf(z) * (-0.5f * kLog2E));
    return (z < 0.0f ? (x * h) * h : x) * ReciprocalApprox(fmaf(h, h, 1.0f));
  } else if constexpr (std::is_same_v<C, float>) {
    const float h = Exp(-0.5f * fabsf(z));
    const float a = z < 0.0f ? (x * h) * h : x;
    return QuotientOfAny(a, fmaf(h, h, 1.0f));
  } else {
    const C h = Exp(C(-0.5) * fabs(z));
    return (z < C(0) ? (x * h) * h : x) / fma(h, h, C(1));
  }
}

// act(x) in compute type C; the same formulas as the CPU kernels
// (src/cpu/activation-inl.h explains them). Every a * b + c is an explicit
// fma, as the CPU's MulAdd: left to nvcc's contraction, a sum can be fused
// in one kernel's instantiation and not in another's (stop 38 found that
// in LayerNormKernel), and the bits would depend on the path an element
// takes (packs, or the head and tail). k16Bit: C is float and the result
// is rounded to a 16-bit type, which allows the hardware approximations.
template <class C, Activation kAct, bool k16Bit = false>
struct ActivationOp {
  // Fits 32 registers (elementwise.cuh): checked with ptxas -v (sm_90a),
  // none spill. float32 too: 40-48 registers had left 1280-1536 threads an
  // SM, and float32 tanh and gelu at 0.93-0.94 of copy at 64M.
  static constexpr bool kFitsStreamingBound = k16Bit || std::is_same_v<C, float>;
  // Two packs a thread on large calls (elementwise.cuh) where it measured
  // faster. H200, 4 input sets, graph replay, 2^28 values, us: erf-GELU
  // float32 622.9 -> 581.6 (two branches), bfloat16 323.4 -> 296.0; tanh
  // bfloat16 269.1 -> 259.9, float32 528-529 -> 518 (2^26 133.7 -> 131.5);
  // 2^20-2^22 values level; float32 gelu_tanh with QuotientOfAny 518.4
  // (IEEE division had it spill at two, 50 % slower). float32 silu keeps
  // one: with two it was 0.5 % slower at 2^26 and 2^28
  // (benchmarks/results/h200-2026-11-28-stop47, runs 1 and 2b; tanh:
  // h200-2026-11-28-stop48, run 1).
  static constexpr int kLargeCallPacks =
      (kAct == Activation::kGelu && kFitsStreamingBound) ||
              (kAct == Activation::kTanh && kFitsStreamingBound) ||
              (kAct == Activation::kGeluTanh && std::is_same_v<C, float> && !k16Bit)
          ? 2
          : 1;
  __device__ C operator()(C x) const {
    if constexpr (kAct == Activation::kRelu) {
      return x < C(0) ? C(0) : x;  // relu(NaN) = NaN, relu(-0) = -0, as torch
    } else if constexpr (kAct == Activation::kSigmoid) {
      if constexpr (k16Bit) {  // h^2 / (1 + h^2) for x < 0 (XSigmoid's h)
        const float h = Exp2Approx(fabsf(x) * (-0.5f * kLog2E));
        return (x < 0.0f ? h * h : 1.0f) * ReciprocalApprox(fmaf(h, h, 1.0f));
      } else {
        const C e = Exp(-fabs(x));
        if constexpr (std::is_same_v<C, float>) {
          return QuotientBounded(x < 0.0f ? e : 1.0f, 1.0f + e);
        } else {
          return (x < C(0) ? e : C(1)) / (C(1) + e);
        }
      }
    } else if constexpr (kAct == Activation::kSilu) {
      return XSigmoid<k16Bit>(x, x);
    } else if constexpr (kAct == Activation::kGelu) {
      if constexpr (std::is_same_v<C, double>) {
        return XNormalCdfDouble(x);
      } else {
        return XNormalCdf<k16Bit>(x);
      }
    } else if constexpr (kAct == Activation::kGeluTanh) {
      constexpr double k0 = 0.7978845608028654;  // sqrt(2 / pi)
      constexpr double k1 = 0.044715;
      return XSigmoid<k16Bit>(x, x * fma(C(2 * k0 * k1), x * x, C(2 * k0)));
    } else if constexpr (kAct == Activation::kTanh) {
      if constexpr (k16Bit) {
        return Tanh16Bit(x);
      } else {
        return Tanh(x);
      }
    } else {
      return Exp(x);
    }
  }
};

}  // namespace cuda
}  // namespace hetkern
