// CUDA kernels of softmax and log_softmax over contiguous rows.
//
// Rows of up to 32768 elements (16384 float64): a group of 1..1024 threads
// per row, each holding up to 16 (32 for the longest rows) values, keeps the
// row in registers: one global read, one write. Longer rows, when few (a
// decode step's logits): a cluster of 2-8 blocks per row keeps it in
// registers (sm_90+). Many rows of more than 16384 values, up to what an SM
// holds (155648 16-bit values): one block per row keeps it in registers and
// shared memory, several rows per SM where they fit; many rows of up to 4
// SMs' worth, a cluster of 2 or 4 such blocks per row (sm_90+). Otherwise one block per
// row (a cluster of up to 8 per row when few rows leave SMs idle, and for
// 1-8 rows a cooperative grid of up to an SM per 4096 values), an online
// (max, sum) pass over the row, a block (and cluster or grid) reduction,
// then a read+write pass (the re-read mostly hits L2).
// 16-byte packs wherever x and out allow, scalar elements otherwise.
//
// Sums of exp(x - max) are kept as ones + rest, as on the CPU (softmax.h):
// log_softmax at a dominating max is -log1p(rest), which log of a rounded
// 1 + rest loses. Long rows sum in double: a thread's chain of up to ~1000
// float adds of small terms into a large partial loses them systematically
// (11.5 eps low on a 2^20-element randn row, more than the bound allows).
#include <algorithm>
#include <cstdint>

#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include <type_traits>

#include "src/core/kernels.h"
#include "src/cuda/common.cuh"
#include "src/cuda/elementwise.cuh"  // Pack

namespace hetkern {
namespace cuda {
namespace {

constexpr int kMinBlockThreads = 128;
constexpr int kMaxBlockThreads = 1024;

// Full-precision exp/log1p (expf: 2 ulp, exp: 1 ulp, log1pf/log1p: 1 ulp);
// the fast __expf would cost up to ~100 ulp for arguments near -87.
__device__ __forceinline__ float Exp(float v) { return expf(v); }
__device__ __forceinline__ double Exp(double v) { return exp(v); }
__device__ __forceinline__ float Log1p(float v) { return log1pf(v); }
__device__ __forceinline__ double Log1p(double v) { return log1p(v); }

// exp(t) of t = x - shift <= 0 in the row kernels, for rows of storage type
// T. 16-bit rows: 2^(t log2 e) on the MUFU unit (ex2.approx.ftz, about 2 ulp
// of float) after one multiply-add, where expf takes ~10 instructions, which
// made 16-bit vocabulary rows issue-bound (4096 x 32000 bfloat16 at 0.85x
// Liger, whose exp is this one). t is exact (the difference of two 16-bit
// values; where it is not, |t| is far beyond 104 and the result 0), so the
// float result is within a relative (|t| + 24) * 2^-24 of the exact one,
// below 8e-6 for every t whose result is not 0 (|t| < 104), against half an
// ulp of 2^-9 (bfloat16) or 2^-12 (float16) when it is rounded:
// docs/softmax.md's 1 ulp holds. float32 and float64 keep expf/exp (their
// bound is in their own eps).
constexpr float kLog2e = 1.4426950408889634f;

// 2^a on the MUFU unit (about 2 ulp; 0 below float's normal range).
__device__ __forceinline__ float Exp2Ftz(float a) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
  return r;
}

template <class T>
struct RowExp {
  using C = typename CudaTypes<T>::Compute;
  static constexpr bool kFast = sizeof(T) == 2;

  // exp(t) * 2^32 (16-bit; exp(t) otherwise): softmax's terms, which it sums
  // and multiplies by 1 / sum, so the factor cancels. It keeps the flushed
  // range (float's subnormals, where ftz gives 0) below 2^-158, out of
  // bfloat16's (down to 2^-133); the product by 1 / sum rounds subnormal
  // results correctly.
  __device__ static __forceinline__ C Scaled(C t) {
    if constexpr (kFast) {
      return Exp2Ftz(fmaf(t, kLog2e, 32.0f));
    } else {
      return Exp(t);
    }
  }

  // exp(t) (16-bit: 0 below float's normal range): log_softmax's terms,
  // summed to a sum >= 1 (the max's term is 1) to which those add nothing.
  __device__ static __forceinline__ C Plain(C t) {
    if constexpr (kFast) {
      return Exp2Ftz(t * kLog2e);
    } else {
      return Exp(t);
    }
  }
};

// softmax's terms of one row, exp(v - shift) as RowExp::Scaled gives them,
// from v. 16-bit rows fold the shift into the exponent's multiply-add:
// 2^(v log2e + (32 - shift log2e)), one FMA and one ex2 a value where
// v - shift took an add more (the kernels issue ~11 instructions a value, so
// this is a tenth of them). The constant's rounding error d is the same for
// every term of the row, so all of them, and their sum, carry the same
// factor 2^d, which cancels in term / sum; the rest of each term's error is
// Scaled's (one rounding of the argument, v log2e being exact in the FMA).
// |shift| <= 2^20 keeps |d| <= 1/16, so the ftz and overflow margins of the
// 2^32 factor hold; other rows (huge or infinite maxima) take v - shift.
template <class T>
struct ShiftedTerm {
  typename CudaTypes<T>::Compute shift;
  __device__ __forceinline__ auto operator()(typename CudaTypes<T>::Compute v) const {
    return RowExp<T>::Scaled(v - shift);
  }
};

struct FoldedTerm {
  float bias;  // 32 - shift log2e
  __device__ __forceinline__ float operator()(float v) const { return Exp2Ftz(fmaf(v, kLog2e, bias)); }
};

// float32 softmax's terms in the register and shared-row kernels the same
// way, without the 2^32 factor: 2^(v log2e - m), m = shift log2e rounded,
// through exp2f (ex2.approx.f32: 2 ulp as expf, subnormal results kept):
// one FMA and ~4 instructions a value where v - shift and expf took ~10.
// Each term is exp(v - shift) * 2^d, d = shift log2e - m the same for every
// term of the row (|d| <= 1/16 at |shift| <= 2^20), which cancels in term /
// sum. A term's relative error: the FMA's rounding of the argument,
// |v - shift| 2^-24 (as rounding v - shift before expf), kLog2e's rounding,
// 0.112 |v - shift| eps, and exp2f's 2 ulp: docs/softmax.md's bound holds
// (worst error 0.47-0.56 of it, against 0.39-0.49 with expf; benchmarks/
// softmax_accuracy.py). H100, graph replay, µs, expf -> this: 128x32000
// 10.56-10.62 -> 10.20-10.27 (Liger 9.35-9.44), 96x32000 10.32-10.37 ->
// 10.01-10.05, 256x32000 24.74-24.86 -> 23.97-24.02 (benchmarks/results/
// h100-2026-12-06-stop61, run 1). The cluster kernel keeps expf: folded
// there (each warp's sum taken out of its own 2^d in double before the
// merge) it lost 3-7 % (64x32000 7.62-7.68 -> 8.15-8.18, 1x151936
// 7.05-7.09 -> 7.27-7.32), for reasons not found.
struct Log2Term {
  float neg_m;  // -(shift log2e), rounded
  __device__ __forceinline__ float operator()(float v) const { return exp2f(fmaf(v, kLog2e, neg_m)); }
};

// The largest |shift| whose terms fold it into the exponent's FMA.
constexpr float kMaxFoldedShift = 1048576.0f;

// Calls pass(term) with the row's softmax term (a function of v). The rows
// of one block may take different branches: pass must hold no barrier.
template <class T, class Pass>
__device__ __forceinline__ void WithSoftmaxTerm(typename CudaTypes<T>::Compute shift, Pass&& pass) {
  if constexpr (RowExp<T>::kFast) {
    if (fabsf(shift) <= kMaxFoldedShift) {
      pass(FoldedTerm{fmaf(-shift, kLog2e, 32.0f)});
      return;
    }
  } else if constexpr (std::is_same_v<T, float>) {
    if (fabsf(shift) <= kMaxFoldedShift) {
      pass(Log2Term{-__fmul_rn(shift, kLog2e)});
      return;
    }
  }
  pass(ShiftedTerm<T>{shift});
}

template <class C>
__device__ __forceinline__ C NegInf() {
  return -static_cast<C>(INFINITY);
}

// Running max over 16-byte packs: 16-bit values two at a time in their own
// type (__hmax2, exact, NaN ignored as by fmax: one instruction per pair
// instead of a conversion and a max per value), other types in C.
template <class T, int kVec>
struct PackMax {
  using C = typename CudaTypes<T>::Compute;
  static constexpr bool kPairs = sizeof(T) == 2 && kVec % 2 == 0;
  using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;

  std::conditional_t<kPairs, Pair, C> acc;

  __device__ __forceinline__ PackMax() {
    if constexpr (kPairs) {
      const T neg_inf = CudaTypes<T>::Store(NegInf<C>());
      acc = Pair(neg_inf, neg_inf);
    } else {
      acc = NegInf<C>();
    }
  }

  __device__ __forceinline__ void Add(const Pack<T, kVec>& pack) {
    if constexpr (kPairs) {
      const Pair* pairs = reinterpret_cast<const Pair*>(pack.lane);
#pragma unroll
      for (int i = 0; i < kVec / 2; ++i) acc = __hmax2(acc, pairs[i]);
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) acc = fmax(acc, LoadLane(pack, k));
    }
  }

  __device__ __forceinline__ C Get() const {
    if constexpr (kPairs) {
      return fmax(CudaTypes<T>::Load(acc.x), CudaTypes<T>::Load(acc.y));
    } else {
      return acc;
    }
  }
};

// exp(v - max), with -inf entries giving 0 also when max is -inf (where
// v - max is NaN). NaN entries, and +inf ones (inf - inf), give NaN, which
// poisons the row's sum as in torch.
template <class C>
__device__ __forceinline__ C ExpShifted(C v, C max) {
  return v == NegInf<C>() ? C(0) : Exp(v - max);
}

// Sum of exp(v - max) over entries v, accumulated in A: `ones` counts the
// entries equal to the max (exp(0) = 1 exactly), `rest` sums the others.
template <class A>
struct ExpSum {
  A ones;  // aggregate, no initializers: MaxSum lives in __shared__ memory
  A rest;

  template <class C>
  __device__ __forceinline__ void Add(C v, C max) {
    // v - max is NaN, not 0, for v == max == +-inf: such terms stay in rest.
    if (v - max == C(0)) {
      ones += A(1);
    } else {
      rest += static_cast<A>(ExpShifted(v, max));
    }
  }

  // The same sum relative to a max `to` >= `from`, the max it was taken
  // with: exactly itself when equal (also for equal infinities).
  template <class C>
  __device__ __forceinline__ ExpSum Rebased(C from, C to) const {
    if (from == to) return *this;
    return {A(0), (ones + rest) * Exp(static_cast<A>(from) - static_cast<A>(to))};
  }

  __device__ __forceinline__ ExpSum operator+(const ExpSum& o) const {
    return {ones + o.ones, rest + o.rest};
  }

  // What y needs: 1 / sum for softmax (the sum rounded to C first), log(sum)
  // = log1p((ones - 1) + rest) for log_softmax; a row of -inf only (ones =
  // rest = 0) gives inf and -inf, which make every y NaN as in torch.
  template <class C>
  __device__ __forceinline__ C Scale(bool log) const {
    return log ? static_cast<C>(Log1p((ones - A(1)) + rest)) : C(1) / static_cast<C>(ones + rest);
  }
};

// The row's max (NaN ignored: fmax) and sum of exp(x - max) (NaN if any
// entry is NaN or +inf), in double whatever C.
template <class C>
struct MaxSum {
  C max;
  ExpSum<double> sum;

  __device__ static MaxSum Empty() { return {NegInf<C>(), {}}; }

  // Adds values online: one rebase of the sum per call at most.
  template <int K>
  __device__ __forceinline__ void Add(const C (&v)[K]) {
    C m = max;
#pragma unroll
    for (int k = 0; k < K; ++k) m = fmax(m, v[k]);
    if (m != max) {
      sum = sum.Rebased(max, m);
      max = m;
    }
#pragma unroll
    for (int k = 0; k < K; ++k) sum.Add(v[k], m);
  }

  __device__ __forceinline__ void Merge(const MaxSum& o) {
    const C m = fmax(max, o.max);
    sum = sum.Rebased(max, m) + o.sum.Rebased(o.max, m);
    max = m;
  }
};

// y from x given the row's max and 1 / sum (softmax) or log of the sum
// (log_softmax). A product, as in the register and cluster kernels: a
// float division per value made the online kernel's softmax issue-bound
// (float32 256x128256 on an H100: 205.2 us against log_softmax's 145.5;
// 146.8 with the product).
template <class C>
__device__ __forceinline__ C SoftmaxValue(C v, C max, C scale, bool log) {
  return log ? (v - max) - scale : ExpShifted(v, max) * scale;
}

// *dst = v with an evict-first hint (st.global.cs), as Liger's softmax
// stores (cache_modifier=".cs"): the shared-row kernel's outputs then leave
// L2 to the inputs of the rows that follow. Graph replay, us: float32
// 256x32000 24.2 -> 23.0 (H100), 19.1 -> 17.3 (H200); bfloat16, whose rows'
// inputs and outputs both fit L2, 1 % either way. The register and cluster
// kernels keep plain stores: there it gained nothing or lost (float32
// 96x32000 10.04 -> 10.07, 32x32000 6.05 -> 6.65; bfloat16 32x32000 4.98 ->
// 5.08, 1x151936 7.32 -> 7.44; benchmarks/results/h100-2026-12-06-stop62,
// runs 1 and 2). That kernel's packs are 16 bytes (its slots are).
template <class T, int kVec>
__device__ __forceinline__ void StoreEvictFirst(Pack<T, kVec>* dst, const Pack<T, kVec>& v) {
  static_assert(sizeof(Pack<T, kVec>) == sizeof(uint4), "16-byte packs");
  uint4 w;
  memcpy(&w, &v, sizeof(w));
  __stcs(reinterpret_cast<uint4*>(dst), w);
}

// v = load ? *src : neg_inf. 16-bit rows load into registers preset to -inf
// (LoadIf): the lane merge (PRMT) the compiler otherwise schedules right
// after each load made it wait for one load before issuing the next (Nsight
// Compute, bfloat16: 1024x16384 issued its 4th load after the 1st returned,
// 4096x32000 each of the next row's 5 register packs after the previous).
// Wider types keep the select: with LoadIf their 64-register kernels spill.
template <class T, int kVec>
__device__ __forceinline__ void LoadOrNegInf(bool load, const Pack<T, kVec>* src,
                                             const Pack<T, kVec>& neg_inf, Pack<T, kVec>& v) {
  if constexpr (sizeof(T) == 2) {
    v = neg_inf;
    LoadIf(load, src, v);
  } else {
    v = load ? *src : neg_inf;
  }
}

// ---- Rows in registers: kGroup threads per row, up to kPacks packs each ----

// Threads per block: one row of kGroup threads, or several short rows.
template <int kGroup>
constexpr int RowBlockThreads() {
  return kGroup > kMinBlockThreads ? kGroup : kMinBlockThreads;
}

// Blocks of 256 and 512 threads are held to 64 registers per thread, so
// that four or two rows are in flight per SM (the compiler would otherwise
// keep a long row's converted values: 123 registers for 4 bfloat16 packs of
// softmax).
template <int kGroup>
constexpr int kMinRowBlocksPerSM =
    RowBlockThreads<kGroup>() >= 256 ? 1024 / RowBlockThreads<kGroup>() : 1;

// op over the kGroup threads of a row (consecutive threads of the block),
// for each of the N values of v at once (one set of barriers): an xor
// butterfly within the warp (every lane ends with the same bits, op being
// commutative), then, for rows of several warps, the warps' results in warp
// order through shared memory (N * kBlock / 32 slots). Called by every thread
// of the block.
template <int kGroup, int N, class C, class Op>
__device__ __forceinline__ void GroupReduce(C (&v)[N], C* shared, Op op) {
  constexpr int kWidth = kGroup < 32 ? kGroup : 32;
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = op(v[i], __shfl_xor_sync(0xffffffffu, v[i], offset, kWidth));
  }
  if constexpr (kGroup > 32) {
    constexpr int kWarps = kGroup / 32;
    const int warps_in_block = blockDim.x / 32;
    if (threadIdx.x % 32 == 0) {
#pragma unroll
      for (int i = 0; i < N; ++i) shared[i * warps_in_block + threadIdx.x / 32] = v[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const C* row_warps = shared + i * warps_in_block + threadIdx.x / kGroup * kWarps;
      v[i] = row_warps[0];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) v[i] = op(v[i], row_warps[w]);
    }
    __syncthreads();  // shared is reused by the next reduction
  }
}

// Row r is held by threads [g*kGroup, (g+1)*kGroup) of a block, lane l owning
// packs l, l + kGroup, ... (coalesced): all its loads are issued before the
// first use, the row is read from memory once, and softmax's exp(x - max) is
// computed once where the values fit in 32 registers (recomputed otherwise; up
// to 32 float exps are kept, which spills nowhere at the 64-register cap).
// Per element, the sum pass is a subtraction, an expf and an add (log_softmax
// adds the ones/rest split): the kernel is close to issue-bound for 16-bit
// types, so nothing else is done per element. cols <= kGroup * kPacks * kVec
// and, for kVec > 1, x and out 16-byte aligned with cols % kVec == 0.
template <class T, int kVec, int kGroup, int kPacks, bool kLog>
__global__ void __launch_bounds__(RowBlockThreads<kGroup>(), kMinRowBlocksPerSM<kGroup>)
    RegisterRowsKernel(const T* x, T* out, int64_t rows, int64_t cols, int64_t x_stride,
                       int64_t out_stride) {
  WaitForPriorGrids();
  AllowDependentGrids();
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  using P = Pack<T, kVec>;
  constexpr int kBlock = RowBlockThreads<kGroup>();
  constexpr int kRowsPerBlock = kBlock / kGroup;
  constexpr bool kKeepExps = !kLog && kPacks * kVec * sizeof(C) <= 128;
  __shared__ C shared[2 * kBlock / 32];
  const int lane = threadIdx.x % kGroup;
  const int64_t packs = cols / kVec;
  P neg_inf;
#pragma unroll
  for (int k = 0; k < kVec; ++k) neg_inf.lane[k] = Types::Store(NegInf<C>());
  const auto fmax_op = [](C a, C b) { return fmax(a, b); };
  const auto sum_op = [](C a, C b) { return a + b; };
  // Every thread of the block runs every iteration (GroupReduce may have
  // barriers); threads past the last row hold -inf and store nothing.
  for (int64_t first = int64_t{blockIdx.x} * kRowsPerBlock; first < rows;
       first += int64_t{gridDim.x} * kRowsPerBlock) {
    const int64_t row = first + threadIdx.x / kGroup;
    const bool valid = row < rows;
    const P* xr = reinterpret_cast<const P*>(x + row * x_stride);
    P cache[kPacks];
#pragma unroll
    for (int s = 0; s < kPacks; ++s) {
      const int64_t p = int64_t{s} * kGroup + lane;
      LoadOrNegInf(valid && p < packs, xr + p, neg_inf, cache[s]);
    }
    PackMax<T, kVec> thread_max;
#pragma unroll
    for (int s = 0; s < kPacks; ++s) thread_max.Add(cache[s]);
    C maxes[1] = {thread_max.Get()};
    GroupReduce<kGroup>(maxes, shared, fmax_op);
    const C max = maxes[0];
    // exp(v - shift) with shift = max, or 0 for a row of -inf only: its exps
    // are then 0 rather than NaN (-inf - -inf), so that the rule for -inf
    // entries needs no test per element; such a row still gives NaN (below).
    const C shift = max == NegInf<C>() ? C(0) : max;
    // Per pack, then over the thread's packs: at most kVec-term float chains.
    C exps[kKeepExps ? kPacks : 1][kVec];
    ExpSum<C> sum{C(0), C(0)};
    const auto sum_pass = [&](const auto& term) {
#pragma unroll
      for (int s = 0; s < kPacks; ++s) {
        ExpSum<C> pack_sum{C(0), C(0)};
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const C v = LoadLane(cache[s], k);
          const C e = kLog ? RowExp<T>::Plain(v - shift) : term(v);
          if constexpr (kKeepExps) exps[s][k] = e;
          // log_softmax needs the sum as ones + rest (see ExpSum); v - max is
          // NaN, not 0, for v == max == +-inf: such terms stay in rest.
          if (kLog && v - max == C(0)) {
            pack_sum.ones += C(1);
          } else {
            pack_sum.rest += e;
          }
        }
        sum = sum + pack_sum;
      }
    };
    if constexpr (kLog) {
      sum_pass(ShiftedTerm<T>{shift});  // log_softmax's terms: Plain, above
    } else {
      WithSoftmaxTerm<T>(shift, sum_pass);
    }
    if constexpr (kLog) {
      C sums[2] = {sum.ones, sum.rest};
      GroupReduce<kGroup>(sums, shared, sum_op);
      sum = {sums[0], sums[1]};
    } else {
      C sums[1] = {sum.rest};
      GroupReduce<kGroup>(sums, shared, sum_op);
      sum.rest = sums[0];
    }
    // softmax multiplies by 1 / sum: NaN for a row of -inf only (0 * inf), as
    // for rows with NaN or +inf (their sum is NaN). log_softmax subtracts
    // log(sum) = log1p((ones - 1) + rest): -inf for a row of -inf only, so
    // that (v - max) - log(sum) is NaN there too.
    const C scale = kLog ? sum.template Scale<C>(true) : C(1) / sum.rest;
    if (!valid) continue;
    P* outr = reinterpret_cast<P*>(out + row * out_stride);
    const auto store_pass = [&](const auto& term) {
#pragma unroll
      for (int s = 0; s < kPacks; ++s) {
        const int64_t p = int64_t{s} * kGroup + lane;
        if (p < packs) {
          P pack;
#pragma unroll
          for (int k = 0; k < kVec; ++k) {
            const C v = LoadLane(cache[s], k);
            C y;
            if constexpr (kLog) {
              y = (v - max) - scale;
            } else if constexpr (kKeepExps) {
              y = exps[s][k] * scale;
            } else {
              y = term(v) * scale;
            }
            pack.lane[k] = Types::Store(y);
          }
          outr[p] = pack;
        }
      }
    };
    if constexpr (kLog || kKeepExps) {
      store_pass(ShiftedTerm<T>{shift});  // no exps left to take
    } else {
      WithSoftmaxTerm<T>(shift, store_pass);
    }
  }
}

// Packs per thread: up to 16 values (kPacksMid) while a row needs at most
// a block, twice that for the longest rows (kPacksMax; not for float64, whose
// 16 doubles would spill); beyond, rows stream. 16-bit rows take kPacksMax
// from 256 threads on (kMidPacksUpTo).
template <int kVec>
constexpr int kPacksMid = kVec >= 8 ? 2 : 4;
template <int kVec>
constexpr int kPacksMax = kVec == 2 ? kPacksMid<kVec> : 2 * kPacksMid<kVec>;
template <int kVec>
constexpr int64_t kRegisterRowMaxPacks = int64_t{kMaxBlockThreads} * kPacksMax<kVec>;
// The widest row group on kPacksMid packs: 256 threads for 16-bit rows, whose
// rows of 4097-8192 values then run on 256 threads of 4 packs, four rows in
// flight per SM, instead of 512 of 2, two (H100, bfloat16, graph replay:
// softmax 8192x5120 78.8 -> 58.4 us, 8192x8192 101.2 -> 92.0, 1024x8192
// 10.6 -> 8.4, 1x8192 1.98 -> 1.88; Liger 60.4, 91.5, 7.9, 2.38;
// benchmarks/results/h100-2026-11-25-smrows). float32 keeps 512 (its
// log_softmax 32x8192 took 3.72 us on 256 threads of 8 packs, 3.31 on 512).
template <int kVec>
constexpr int kMidPacksUpTo = kVec >= 8 ? 256 : 512;

// The first (kGroup, kPacks) of (1, 1), (1, 2), .. (1, kPacksMid), then
// (2, kPacksMid), (4, kPacksMid), .. (kMidPacksUpTo, kPacksMid),
// (kMidPacksUpTo, kPacksMax), .. (1024, kPacksMax) that holds rows of
// `packs` packs: few threads per row,
// several loads in flight per thread, and 1024-thread rows (whose registers
// fill an SM: one row in flight per SM) only for rows that need them. Rows
// longer than kRegisterRowMaxPacks are not launched.
template <class T, int kVec, int kGroup = 1, int kPacks = 1>
void LaunchRegisterRows(const DeviceScope& scope, const T* x, T* out, int64_t rows, int64_t cols,
                        int64_t x_stride, int64_t out_stride, bool log) {
  const int64_t packs = cols / kVec;
  if (packs <= int64_t{kGroup} * kPacks) {
    constexpr int kBlock = RowBlockThreads<kGroup>();
    const int64_t blocks_needed = (rows + kBlock / kGroup - 1) / (kBlock / kGroup);
    // A block a row tile, the hardware starting one as another ends, which
    // keeps more bytes in flight than a grid of 16 blocks an SM looping over
    // tiles (H100, bfloat16, graph replay: 16384x4096 94.8 -> 90.5 us,
    // 65536x4096 383 -> 355, Liger 91.2 and 357; benchmarks/results/
    // h100-2026-11-25-smtiles). 512- and 1024-thread rows too: a grid of 16
    // blocks an SM looping over rows gave each block 7 or 8 of 16384 rows,
    // so the SMs finished unevenly, whole blocks of rows apart (16384x16384
    // 366.8 -> 354.2 us, Liger 355.6;
    // benchmarks/results/h100-2026-11-26-stop31, run 7).
    const int blocks = static_cast<int>(std::min<int64_t>(blocks_needed, INT32_MAX));
    const auto kernel = log ? RegisterRowsKernel<T, kVec, kGroup, kPacks, true>
                            : RegisterRowsKernel<T, kVec, kGroup, kPacks, false>;
    LaunchDependent(scope, kernel, blocks, kBlock, x, out, rows, cols, x_stride, out_stride);
  } else if constexpr (kGroup == 1 && kPacks < kPacksMid<kVec>) {
    LaunchRegisterRows<T, kVec, 1, kPacks * 2>(scope, x, out, rows, cols, x_stride, out_stride, log);
  } else if constexpr (kGroup < kMidPacksUpTo<kVec>) {
    LaunchRegisterRows<T, kVec, kGroup * 2, kPacksMid<kVec>>(scope, x, out, rows, cols, x_stride, out_stride, log);
  } else if constexpr (kPacks < kPacksMax<kVec>) {
    LaunchRegisterRows<T, kVec, kGroup, kPacksMax<kVec>>(scope, x, out, rows, cols, x_stride, out_stride, log);
  } else if constexpr (kGroup < kMaxBlockThreads) {
    LaunchRegisterRows<T, kVec, kGroup * 2, kPacks>(scope, x, out, rows, cols, x_stride, out_stride, log);
  }
}

// ---- Long rows in registers and shared memory: one read, one write ---------

// Rows the register kernel would give a whole SM (more than 16384 values:
// one 1024-thread row in flight per SM), up to what one SM's registers and
// shared memory hold (155648 16-bit or 77824 float32 values on an H100; not
// float64, whose 2-lane packs would spill): a block of kThreads per row,
// kSharedRowRegPacks packs per thread in registers and the rest in shared
// memory, with the smallest block that fits so that several rows are in
// flight per SM (32000 bfloat16: four 256-thread rows). Each thread reads back only the slots it filled, so no barrier
// guards them, and cp.async fills them, so that all of a row's loads are in
// flight at once. The online kernel below reads such a row twice, and with
// a row in flight per SM its re-read misses L2 (4096 x 128256 bfloat16: 1.52
// TB/s). The arithmetic is the register kernel's (the same results).
//
// kClustered (sm_90+): many rows past one SM (up to 155648 float32 or 311296
// 16-bit values on an H100) on a cluster of 2 or 4 such blocks a row, one an
// SM, each holding a slice of the row: block r of n the packs [r s, (r + 1) s),
// s = ceil(packs / n). The block's max and sums are combined over the cluster
// (ClusterCombine). The online kernel, which took these rows, read each value
// twice from DRAM once the resident rows passed L2. H100, graph replay, 2
// input sets, µs, online -> clustered: float32 softmax 4096x128256 2102 ->
// 1620 (0.66 -> 0.85 of a copy), 1024x100000 437 -> 351, 67x200000 103 ->
// 58; log_softmax 4096x128256 2101 -> 1690; bfloat16 softmax 2048x200000
// 950 -> 716, 140x155656 95.2 -> 53.1 (torch 84.9); log_softmax
// 2048x200000 894 -> 756 (benchmarks/results/h100-2026-12-07-stop67/H).
constexpr int kSharedRowRegPacks = 5;  // 20 registers of data: no spills at 64

// op over the blocks of the cluster of each of the N values of v, which are
// block totals (every thread of every block of the cluster calls it): block
// r's values in slots[parity] of its shared memory, one cluster barrier,
// then every thread combines the blocks' values in rank order, so every
// block gets the same bits. A slot pair is written again two combines later,
// after the next combine's barrier, which every reader passes after reading.
template <int N, int kSlots, class C, class Op>
__device__ __forceinline__ void ClusterCombine(C (&v)[N], C (&slots)[2][kSlots], int& parity, Op op) {
  static_assert(N <= kSlots);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) slots[parity][i] = v[i];
  }
  cluster.sync();
  const int n_blocks = static_cast<int>(cluster.num_blocks());
#pragma unroll
  for (int i = 0; i < N; ++i) {
    C total = *cluster.map_shared_rank(&slots[parity][i], 0);
    for (int r = 1; r < n_blocks; ++r) total = op(total, *cluster.map_shared_rank(&slots[parity][i], r));
    v[i] = total;
  }
  parity ^= 1;
#endif
}

template <class T, int kVec, int kThreads, bool kLog, bool kClustered = false>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads)  // 64 registers
    SharedRowsKernel(const T* x, T* out, int64_t rows, int64_t cols, int64_t x_stride,
                     int64_t out_stride, int shared_slots) {
  WaitForPriorGrids();
  AllowDependentGrids();
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  using P = Pack<T, kVec>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  P* const slots = reinterpret_cast<P*>(shared_bytes);  // [shared_slots][kThreads]
  __shared__ C scratch[2 * kThreads / 32];
  const int lane = threadIdx.x;
  __shared__ C cluster_slots[2][2];  // ClusterCombine's (kClustered)
  int parity = 0;
  // This block's slice of each row (kClustered), else the whole row.
  int row_blocks = 1;
  int64_t packs = cols / kVec;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (kClustered) {
    row_blocks = static_cast<int>(cooperative_groups::this_cluster().num_blocks());
    const int64_t slice = (packs + row_blocks - 1) / row_blocks;
    const int64_t first_pack = cooperative_groups::this_cluster().block_rank() * slice;
    packs = std::max<int64_t>(0, std::min(packs - first_pack, slice));
    x += first_pack * kVec;
    out += first_pack * kVec;
  }
#endif
  P neg_inf;
#pragma unroll
  for (int k = 0; k < kVec; ++k) neg_inf.lane[k] = Types::Store(NegInf<C>());
  const auto fmax_op = [](C a, C b) { return fmax(a, b); };
  const auto sum_op = [](C a, C b) { return a + b; };
  const auto pack_index = [&](int slot) { return int64_t{slot} * kThreads + lane; };
  const auto row_of = [&](int64_t row) { return reinterpret_cast<const P*>(x + row * x_stride); };
  // This thread's s-th slot, read whole (one 16-byte load): read lane by
  // lane, as the compiler did from a reference, it took eight 2-byte loads.
  static_assert(sizeof(P) == 16);
  const auto slot_pack = [&](int s) {
    P v;
    *reinterpret_cast<uint4*>(&v) = *reinterpret_cast<const uint4*>(&slots[pack_index(s)]);
    return v;
  };
  // The loads of a row's s-th register pack and s-th shared slot.
  P cache[kSharedRowRegPacks];
  const auto load_register = [&](const P* xr, int s) {
    LoadOrNegInf(pack_index(s) < packs, xr + pack_index(s), neg_inf, cache[s]);
  };
  const auto load_slot = [&](const P* xr, int s) {
    const int64_t p = pack_index(kSharedRowRegPacks + s);
    P* slot = &slots[pack_index(s)];
    if (p < packs) {
      __pipeline_memcpy_async(slot, xr + p, sizeof(P));
    } else {
      *slot = neg_inf;
    }
  };
  // The block's first row is loaded here; each next one while the current
  // one is written, into the registers and slots just written out, so that
  // an SM holding one row (128256 values) keeps reading while it computes.
  int64_t row = blockIdx.x / row_blocks;
  if (row < rows) {
    const P* xr = row_of(row);
    for (int s = 0; s < shared_slots; ++s) load_slot(xr, s);
    __pipeline_commit();
#pragma unroll
    for (int s = 0; s < kSharedRowRegPacks; ++s) load_register(xr, s);
  }
  for (; row < rows; row += gridDim.x / row_blocks) {
    PackMax<T, kVec> thread_max;
#pragma unroll
    for (int s = 0; s < kSharedRowRegPacks; ++s) thread_max.Add(cache[s]);
    __pipeline_wait_prior(0);
    for (int s = 0; s < shared_slots; ++s) thread_max.Add(slot_pack(s));
    C maxes[1] = {thread_max.Get()};
    GroupReduce<kThreads>(maxes, scratch, fmax_op);
    if constexpr (kClustered) ClusterCombine(maxes, cluster_slots, parity, fmax_op);
    const C max = maxes[0];
    const C shift = max == NegInf<C>() ? C(0) : max;  // as in RegisterRowsKernel
    ExpSum<C> sum{C(0), C(0)};
    const auto sum_pass = [&](const auto& term) {
      const auto sum_of = [&](const P& pack) {
        ExpSum<C> pack_sum{C(0), C(0)};
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const C v = LoadLane(pack, k);
          if (kLog && v - max == C(0)) {
            pack_sum.ones += C(1);
          } else {
            pack_sum.rest += kLog ? RowExp<T>::Plain(v - shift) : term(v);
          }
        }
        sum = sum + pack_sum;
      };
#pragma unroll
      for (int s = 0; s < kSharedRowRegPacks; ++s) sum_of(cache[s]);
      for (int s = 0; s < shared_slots; ++s) sum_of(slot_pack(s));
    };
    if constexpr (kLog) {
      sum_pass(ShiftedTerm<T>{shift});  // log_softmax's terms: Plain, above
    } else {
      WithSoftmaxTerm<T>(shift, sum_pass);
    }
    if constexpr (kLog) {
      C sums[2] = {sum.ones, sum.rest};
      GroupReduce<kThreads>(sums, scratch, sum_op);
      if constexpr (kClustered) ClusterCombine(sums, cluster_slots, parity, sum_op);
      sum = {sums[0], sums[1]};
    } else {
      C sums[1] = {sum.rest};
      GroupReduce<kThreads>(sums, scratch, sum_op);
      if constexpr (kClustered) ClusterCombine(sums, cluster_slots, parity, sum_op);
      sum.rest = sums[0];
    }
    const C scale = kLog ? sum.template Scale<C>(true) : C(1) / sum.rest;
    P* outr = reinterpret_cast<P*>(out + row * out_stride);
    // Each register or slot is refilled only after its values are stored
    // (the store consumes them; a thread's own slots need no barrier). The
    // next row is this block's only: no other block writes it, also in place.
    const int64_t next = row + gridDim.x / row_blocks;
    const P* xn = row_of(next < rows ? next : row);
    const auto store_pass = [&](const auto& term) {
      const auto store = [&](const P& in, int64_t p) {
        if (p >= packs) return;
        P pack;
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const C v = LoadLane(in, k);
          pack.lane[k] = Types::Store(kLog ? (v - max) - scale : term(v) * scale);
        }
        StoreEvictFirst(outr + p, pack);
      };
#pragma unroll
      for (int s = 0; s < kSharedRowRegPacks; ++s) {
        store(cache[s], pack_index(s));
        if (next < rows) load_register(xn, s);
      }
      for (int s = 0; s < shared_slots; ++s) {
        store(slot_pack(s), pack_index(kSharedRowRegPacks + s));
        if (next < rows) load_slot(xn, s);
      }
    };
    if constexpr (kLog) {
      store_pass(ShiftedTerm<T>{shift});  // log_softmax takes no exps here
    } else {
      WithSoftmaxTerm<T>(shift, store_pass);
    }
    __pipeline_commit();
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // No block exits while another may still read its ClusterCombine slots.
  if constexpr (kClustered) cooperative_groups::this_cluster().sync();
#endif
}

// A block size for `rows` rows of `packs` packs and the shared slots per
// thread it needs: of 256, 512 and 1024 threads, the one with the shortest
// estimated time, rounds of rows (rows / (blocks per SM x SMs)) times packs
// per thread, and of equals the smallest. So blocks as small as fit once
// there are many rows (4096 x 32000 bfloat16: four 256-thread rows per SM,
// 199 us against 216 in 512-thread blocks), and larger ones while the rows
// fill fewer SMs' block slots than that (256 x 32000: one 512-thread row per
// block slot, 11.3 against 14.1 us). 128256 runs one 1024-thread block per SM
// (a 512-thread block holds the row too, at 1.11x the time). slots == 0 if
// none holds the row. Blocks of at least min_threads.
struct SharedRowShape {
  int threads = 0;
  int slots = 0;
  int blocks_per_sm = 0;
  int row_blocks = 1;  // > 1: a cluster of that many blocks a row (kClustered)
};

constexpr int kSharedRowStaticBytes = 1024;  // the reductions' scratch and the block's reserve

inline SharedRowShape PickSharedRowShape(const DeviceScope& scope, int64_t rows, int64_t packs,
                                         int min_threads = 256) {
  SharedRowShape best;
  int64_t best_cost = 0;
  for (int threads = min_threads; threads <= 1024; threads *= 2) {
    const int64_t per_thread = (packs + threads - 1) / threads;
    const int64_t slots = per_thread - kSharedRowRegPacks;
    const int64_t bytes = slots * threads * 16 + kSharedRowStaticBytes;
    if (slots < 1 || bytes > scope.SharedMemoryPerBlock()) continue;
    const int64_t by_memory = scope.SharedMemoryPerSm() / bytes;
    const int blocks = static_cast<int>(std::min<int64_t>(by_memory, 1024 / threads));  // 64 registers
    const int64_t in_flight = int64_t{blocks} * scope.Multiprocessors();
    const int64_t cost = (rows + in_flight - 1) / in_flight * per_thread;
    if (best.slots == 0 || cost < best_cost) {
      best = {threads, static_cast<int>(slots), blocks};
      best_cost = cost;
    }
  }
  return best;
}

// Rows past one block (PickSharedRowShape's slots == 0), more of them than
// the online kernel would put on clusters (OnlineRowBlocks() == 1): of 2
// and 4 blocks a row (512 or 1024 threads), the first whose blocks run two
// an SM, so that one row's cluster barriers (each block waits there for the
// slowest SM of its cluster) overlap another row's loads; else the fewest
// that hold the row, one an SM. Of 512 and 1024 threads, PickSharedRowShape's
// cost model picks, and its pick alternates with the length: at 4096 rows on
// 132 SMs, float32 x 100000 and 16-bit x 155656, 160000 and 200000 take 4
// blocks of 512 two an SM, float32 x 128256 and 16-bit x 250000 2 blocks of
// 1024 one an SM (stop 68's O, prepared: 512 threads wherever two fit).
// H100, graph replay, µs, fewest blocks one an SM -> two an SM: bfloat16
// softmax 2048x200000 716 -> 626, log_softmax 752 -> 642, 140x155656 52.9
// -> 44.4; float32 softmax 1024x100000 350 -> 313, log_softmax 400 -> 329
// (benchmarks/results/h100-2026-12-07-stop68).
inline SharedRowShape PickClusteredSharedRowShape(const DeviceScope& scope, int64_t rows,
                                                  int64_t packs) {
  SharedRowShape fewest_blocks;
  for (const int row_blocks : {2, 4}) {
    SharedRowShape shape =
        PickSharedRowShape(scope, rows * row_blocks, (packs + row_blocks - 1) / row_blocks, 512);
    if (shape.slots > 0) {
      shape.row_blocks = row_blocks;
      if (shape.blocks_per_sm >= 2) return shape;
      if (fewest_blocks.slots == 0) fewest_blocks = shape;
    }
  }
  return fewest_blocks;
}

// Clusters of `cluster_blocks` blocks of `threads` threads and
// `shared_bytes` of dynamic shared memory of `kernel` that the GPU holds at
// once; 0 where none fits (a cluster must fit one SM partition) or the
// driver refuses the shape, an answer rather than an error to report later.
// The caller first sets the kernel attributes the shape needs.
template <class Kernel>
int ResidentClusters(const DeviceScope& scope, Kernel* kernel, unsigned cluster_blocks, unsigned threads,
                     size_t shared_bytes) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster_blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = scope.stream();
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim = {cluster_blocks, 1, 1};
  config.attrs = &attribute;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) clusters = 0;
  cudaGetLastError();
  return clusters;
}

// The shared kernel on clusters of kRowBlocks blocks of kThreads a row,
// looping over rows as below: as many clusters as the GPU holds at once (a
// cluster started late would take its rows after the others', a second
// round). The occupancy is asked at each call, with the call's shared
// memory, which decides whether two blocks share an SM; the query may run
// inside a stream capture (test_cuda_first_call_inside_graph_capture).
// false (nothing launched) where the GPU holds none.
template <class T, int kVec, bool kLog, int kThreads, int kRowBlocks>
bool LaunchClusteredSharedRows(const DeviceScope& scope, int slots, const T* x, T* out, int64_t rows,
                               int64_t cols, int64_t x_stride, int64_t out_stride) {
  constexpr auto kKernel = SharedRowsKernel<T, kVec, kThreads, kLog, true>;
  const int bytes = slots * kThreads * 16;
  HETKERN_CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  const int clusters = ResidentClusters(scope, kKernel, kRowBlocks, kThreads, bytes);
  if (clusters == 0) return false;
  LaunchDependent(scope, kKernel,
                  LaunchShape{dim3(static_cast<unsigned>(std::min<int64_t>(rows, clusters) * kRowBlocks)),
                              dim3(kThreads), static_cast<size_t>(bytes), kRowBlocks},
                  x, out, rows, cols, x_stride, out_stride, slots);
  return true;
}

// false (nothing launched) where the GPU holds none of shape's clusters.
template <class T, int kVec>
bool LaunchSharedRows(const DeviceScope& scope, const SharedRowShape& shape, const T* x, T* out,
                      int64_t rows, int64_t cols, int64_t x_stride, int64_t out_stride, bool log) {
  if (shape.row_blocks > 1) {
    const auto clustered = [&](auto log_tag, auto row_blocks) {
      constexpr bool kLog = decltype(log_tag)::value;
      constexpr int kRowBlocks = decltype(row_blocks)::value;
      return shape.threads == 512
                 ? LaunchClusteredSharedRows<T, kVec, kLog, 512, kRowBlocks>(scope, shape.slots, x, out, rows,
                                                                             cols, x_stride, out_stride)
                 : LaunchClusteredSharedRows<T, kVec, kLog, 1024, kRowBlocks>(scope, shape.slots, x, out, rows,
                                                                              cols, x_stride, out_stride);
    };
    constexpr std::true_type kLog;
    constexpr std::false_type kSoftmax;
    if (shape.row_blocks == 2) return log ? clustered(kLog, Int<2>{}) : clustered(kSoftmax, Int<2>{});
    return log ? clustered(kLog, Int<4>{}) : clustered(kSoftmax, Int<4>{});
  }
  const int bytes = shape.slots * shape.threads * 16;
  // Several blocks an SM: a block a row, started as another ends. A grid of
  // all block slots looping over rows gave 4096 rows of 32000 bfloat16 out
  // as 8 to 400 blocks and 7 to 128 (528 slots), a last round on three
  // quarters of them (H100, graph replay: 196.2 -> 178.0 us, Liger 187.5;
  // benchmarks/results/h100-2026-11-26-stop31, run 7). One block an SM
  // (128256 values) keeps the loop: each block loads its next row while
  // writing the current one, which no other block on the SM would overlap.
  const int blocks = static_cast<int>(std::min<int64_t>(
      rows, shape.blocks_per_sm >= 2 ? INT32_MAX : int64_t{shape.blocks_per_sm} * scope.Multiprocessors()));
  const auto launch = [&](auto kernel) {
    HETKERN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    LaunchDependent(scope, kernel,
                    LaunchShape{dim3(blocks), dim3(shape.threads), static_cast<size_t>(bytes)}, x,
                    out, rows, cols, x_stride, out_stride, shape.slots);
  };
  const auto with_threads = [&](auto threads) {
    constexpr int kThreads = decltype(threads)::value;
    if (log) {
      launch(SharedRowsKernel<T, kVec, kThreads, true>);
    } else {
      launch(SharedRowsKernel<T, kVec, kThreads, false>);
    }
  };
  if (shape.threads == 256) {
    with_threads(Int<256>{});
  } else if (shape.threads == 512) {
    with_threads(Int<512>{});
  } else {
    with_threads(Int<1024>{});
  }
  return true;
}

// ---- Long rows: one block per row, online (max, sum) then write -------------

// Calls fn on the row's elements owned by this thread: scalar ones (head up
// to 16-byte alignment, tail) as 1-element arrays, the middle as kVec packs.
// The same elements go to the same thread in both passes.
template <class T, int kVec, class ScalarFn, class PackFn>
__device__ __forceinline__ void ForEachOwned(int64_t cols, int64_t head, ScalarFn&& scalar_fn,
                                             PackFn&& pack_fn) {
  const int64_t packs = (cols - head) / kVec;
  for (int64_t i = threadIdx.x; i < head; i += blockDim.x) scalar_fn(i);
  for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) pack_fn(head + p * kVec);
  for (int64_t i = head + packs * kVec + threadIdx.x; i < cols; i += blockDim.x) scalar_fn(i);
}

template <class C>
__device__ __forceinline__ MaxSum<C> ShflXor(const MaxSum<C>& v, int offset) {
  MaxSum<C> r;
  r.max = __shfl_xor_sync(0xffffffffu, v.max, offset);
  r.sum.ones = __shfl_xor_sync(0xffffffffu, v.sum.ones, offset);
  r.sum.rest = __shfl_xor_sync(0xffffffffu, v.sum.rest, offset);
  return r;
}

template <class C>
__device__ __forceinline__ MaxSum<C> BlockMerge(MaxSum<C> acc, MaxSum<C>* shared) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    acc.Merge(ShflXor(acc, offset));
  }
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (threadIdx.x % 32 == 0) shared[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = threadIdx.x < warps ? shared[threadIdx.x] : MaxSum<C>::Empty();
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      acc.Merge(ShflXor(acc, offset));
    }
    if (threadIdx.x == 0) shared[32] = acc;
  }
  __syncthreads();
  return shared[32];
}

// ---- Long rows held by a cluster: one read, one write --------------------------
//
// A row too long for one block's registers (32768 to 262144 16-bit or
// float32 logits), or a row of 16K-32K values that would take a whole
// block, when there are few such rows, is split over a cluster of
// kClusterMax or fewer blocks of kThreads threads, each thread holding kPacks
// packs of it in registers: x is read from memory once, as in the register
// kernel, instead of twice as in the online one. Two cheap reductions over
// the cluster, no exp in either: the row's max, then the ones + rest sum of
// exp(x - max) (per pack in C, beyond in double). Each goes warp butterfly
// -> per-warp values in shared memory -> butterfly over the warps ->
// per-block values read by every warp from every block of the cluster
// (distributed shared memory) -> butterfly over the blocks: every thread of
// the cluster ends with the same bits, in an order fixed by the launch
// shape. Rows of 16K-32K values (kOneReduction) take one reduction of (max,
// sum) pairs instead: each warp's max (a butterfly, no barrier), the sums
// of exp(x - that max), and the pairs merged by the same path, each lane's
// pair rebased to its group's max with one exp in double (no error the sum
// would notice): one cluster barrier a row, not two. H100, graph replay,
// µs, two reductions -> one (run 1, all cluster rows): bfloat16
// log_softmax 32x32000 5.77 -> 5.30, float32 softmax 32x32000 6.77 -> 6.60,
// log_softmax 7.50 -> 6.86; but longer rows lost (float32 softmax 1x128256
// 6.65 -> 6.90, 1x151936 on 16 blocks 7.10 -> 8.75), so they keep two (run
// 2, as landed: those level; float32 log_softmax 1x32000 4.68 -> 4.34,
// 32x32000 7.38 -> 6.77; benchmarks/results/h100-2026-12-06-stop60).
constexpr int kClusterMax = 8;  // the portable cluster size limit

template <class V, class Op>
__device__ __forceinline__ V ButterflyOver(V v, int lanes, Op op) {
  for (int offset = lanes / 2; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// op-reduction over the cluster of each of the N values of v, in place, with
// one set of barriers (all the cluster's threads call it). `warps` (N rows
// of kWarps slots) and `block` (N slots) are this reduction's own shared
// slots: a slot is written again only after the next cluster barrier (the
// next reduction's, or the kernel's last), which every reader passes after
// reading it.
template <int kWarps, int N, class V, class Op>
__device__ __forceinline__ void ClusterReduce(V (&v)[N], V (*warps)[kWarps], V* block, Op op) {
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = ButterflyOver(v[i], 32, op);
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) warps[i][threadIdx.x / 32] = v[i];
  }
  __syncthreads();
  // Lane l takes warp l % kWarps (then block l % n_blocks): every aligned
  // group of lanes holds all the values, and a butterfly of a commutative op
  // gives all its lanes the same bits.
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = ButterflyOver(warps[i][lane % kWarps], kWarps, op);
  if (threadIdx.x == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) block[i] = v[i];
  }
  cluster.sync();
  const int n_blocks = static_cast<int>(cluster.num_blocks());
#pragma unroll
  for (int i = 0; i < N; ++i) {
    v[i] = ButterflyOver(*cluster.map_shared_rank(block + i, lane % n_blocks), n_blocks, op);
  }
}

// The sums of each aligned group of `lanes` lanes, in every lane of the group.
template <class A>
__device__ __forceinline__ ExpSum<A> SumOver(const ExpSum<A>& sum, int lanes) {
  const auto add = [](A a, A b) { return a + b; };
  return {ButterflyOver(sum.ones, lanes, add), ButterflyOver(sum.rest, lanes, add)};
}

// The merge of the (max, sum) pairs of each aligned group of `lanes` lanes,
// in every lane of the group: a rebase (an exp) only where a lane's max is
// below the group's.
template <class C>
__device__ __forceinline__ MaxSum<C> MergeOver(const MaxSum<C>& v, int lanes) {
  const C max = ButterflyOver(v.max, lanes, [](C a, C b) { return fmax(a, b); });
  return {max, SumOver(v.sum.Rebased(v.max, max), lanes)};
}

// The row's (max, sum) over the cluster, from each lane's sum relative to
// its warp's max, part.max (all the cluster's threads call it): kOneReduction's
// merge. `warps` and `block` are its shared slots: the warps' are written
// again after the next row's cluster barrier, which every reader passes
// after reading them; the caller alternates two `block` slots between rows,
// since other blocks read them after that barrier.
template <int kWarps, class C>
__device__ __forceinline__ MaxSum<C> ClusterMergeParts(const MaxSum<C>& part, MaxSum<C> (&warps)[kWarps],
                                                       MaxSum<C>* block) {
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int lane = threadIdx.x % 32;
  MaxSum<C> merged{part.max, SumOver(part.sum, 32)};  // one max a warp: no rebase
  if (lane == 0) warps[threadIdx.x / 32] = merged;
  __syncthreads();
  // Lane l takes warp l % kWarps (then block l % n_blocks): every aligned
  // group of lanes holds all the pairs.
  merged = MergeOver(warps[lane % kWarps], kWarps);
  if (threadIdx.x == 0) *block = merged;
  cluster.sync();
  const int n_blocks = static_cast<int>(cluster.num_blocks());
  return MergeOver(*cluster.map_shared_rank(block, lane % n_blocks), n_blocks);
}

// The cluster kernel's float32 softmax terms on one path for every row
// (two, the folded and the plain, doubled its unrolled code: 2064 -> 3000
// sm_90 instructions): exp2f(fma(v - s, log2 e, c)), (s, c) = (0, -m)
// where the shift folds (Log2Term; d = shift log2e - m, taken out of the
// sums in double), else (shift, 0): v - shift is then exact wherever
// exp(v - shift) is not 0 (Sterbenz, |shift| > 2^20).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900  // the cluster kernel's only (sm_90+)
struct ClusterTerm {
  float s, c, d;
  __device__ __forceinline__ float operator()(float v) const { return exp2f(fmaf(v - s, kLog2e, c)); }
  __device__ static __forceinline__ ClusterTerm Of(float shift) {
    if (fabsf(shift) <= kMaxFoldedShift) {
      const float m = __fmul_rn(shift, kLog2e);
      return {0.0f, -m, fmaf(shift, kLog2e, -m)};
    }
    return {shift, 0.0f, 0.0f};
  }
};
#endif

// 2^u for |u| <= 1/16 in double: e^(u ln 2) to its 6th power.
template <class F>
__device__ __forceinline__ F Exp2Small(F u) {
  const F t = u * F(0.6931471805599453);
  return 1 + t * (1 + t * (F(1) / 2 + t * (F(1) / 6 + t * (F(1) / 24 + t * (F(1) / 120 + t * (F(1) / 720))))));
}

// 256-thread blocks run two per SM (<= 128 registers a thread), so that one
// row's loads overlap another's math; 512-thread blocks (the longest rows)
// one, or two at 64 registers where ClusterShape::two_per_sm asks for it.
// At most 8 packs a thread for 16-bit values (they spill at 12, their
// converted values taking registers too); float32 ones, which need no
// conversion, up to 16 (64 registers of row).
template <class T, int kVec, int kThreads, int kPacks, bool kLog,
          int kBlocksPerSm = (kThreads <= 256 ? 2 : 1), bool kOneReduction = false>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    ClusterRowsKernel(const T* x, T* out, int64_t rows, int64_t cols, int64_t x_stride,
                      int64_t out_stride) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // clusters are sm_90+; the launcher never picks this kernel below
#else
  WaitForPriorGrids();
  AllowDependentGrids();
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  using P = Pack<T, kVec>;
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int cluster_size = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  constexpr int kWarps = kThreads / 32;
  constexpr int kSums = kLog ? 2 : 1;  // log_softmax: rest and ones; softmax: rest
  // float32 softmax's terms as ClusterTerm gives them on one-reduction
  // clusters of up to 8 packs a thread (H100, graph replay: 32x32000 6.63
  // -> 6.05 us, other rows level; benchmarks/results/h100-2026-12-06-stop62,
  // run 1); with 16 packs and on the two-reduction kernels they lost
  // (64x32000 7.67 -> 8.23, 1x151936 7.06 -> 7.27; .../h100-2026-12-06-stop61,
  // run 4), so those keep expf. The store pass takes each term again rather
  // than keep the sum pass's (96 registers, no spills) and scale them by
  // 2^(warp's max - row's) / sum: kept, they lost (16x32000 5.32 -> 5.52 us,
  // 32x32000 6.06 -> 6.99; .../h100-2026-12-06-stop63, run 1, D).
  constexpr bool kFoldedTerms = std::is_same_v<T, float> && !kLog && kOneReduction && kPacks <= 8;
  // The slots of the two reductions (the max, then the sums) and of the one
  // (kOneReduction; its block slot by row parity). The block slots are read
  // by the cluster's other blocks.
  __shared__ C warp_max[1][kWarps];
  __shared__ double warp_sums[kSums][kWarps];
  __shared__ C block_max[1];
  __shared__ double block_sums[kSums];
  __shared__ MaxSum<C> warp_parts[kWarps];
  __shared__ MaxSum<C> block_parts[2];
  const int64_t packs = cols / kVec;
  const int64_t first_pack = int64_t{rank} * kThreads * kPacks + threadIdx.x;
  const int64_t clusters = gridDim.x / cluster_size;
  P neg_inf;
#pragma unroll
  for (int k = 0; k < kVec; ++k) neg_inf.lane[k] = Types::Store(NegInf<C>());
  const auto fmax_op = [](C a, C b) { return fmax(a, b); };
  const auto add_op = [](double a, double b) { return a + b; };
  int parity = 0;
  for (int64_t row = blockIdx.x / cluster_size; row < rows; row += clusters, parity ^= 1) {
    const P* xr = reinterpret_cast<const P*>(x + row * x_stride);
    P cache[kPacks];
#pragma unroll
    for (int s = 0; s < kPacks; ++s) {
      const int64_t p = first_pack + s * kThreads;
      // The select, not LoadOrNegInf: with it this kernel's bfloat16
      // log_softmax 1x128256 took 6.45 -> 7.0 us and softmax at 1-64 rows
      // gained at most 1.5 % (benchmarks/results/h100-2026-11-26-stop29, run 5).
      cache[s] = p < packs ? xr[p] : neg_inf;
    }
    // The compiler would keep every converted value from one pass to the
    // next (spilling at 12 16-bit packs); an empty asm "changing" the packs
    // makes it convert them again (one instruction per value) instead.
    const auto forget_converted = [&] {
#pragma unroll
      for (int s = 0; s < kPacks; ++s) {
        auto* words = reinterpret_cast<uint32_t*>(&cache[s]);
#pragma unroll
        for (int w = 0; w < int{sizeof(P) / 4}; ++w) asm volatile("" : "+r"(words[w]));
      }
    };
    PackMax<T, kVec> thread_max;
#pragma unroll
    for (int s = 0; s < kPacks; ++s) thread_max.Add(cache[s]);
    // The max the sums' exps are taken relative to: the row's (two
    // reductions), or the warp's, rebased to the row's in the merge.
    C base_max;
    if constexpr (kOneReduction) {
      base_max = ButterflyOver(thread_max.Get(), 32, fmax_op);
    } else {
      C reduced_max[1] = {thread_max.Get()};
      ClusterReduce(reduced_max, warp_max, block_max, fmax_op);
      base_max = reduced_max[0];
    }
    const C base_shift = base_max == NegInf<C>() ? C(0) : base_max;  // as in RegisterRowsKernel
    forget_converted();
    const ClusterTerm base_term = ClusterTerm::Of(base_shift);
    double ones = 0.0, rest = 0.0;
#pragma unroll
    for (int s = 0; s < kPacks; ++s) {
      ExpSum<C> pack_sum{C(0), C(0)};
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const C v = LoadLane(cache[s], k);
        if constexpr (kLog) {
          // Every lane takes the exp; a select, not a branch, sorts it (H100,
          // float32: 1x128256 8.13 -> 7.63 us, 1x151936 11.34 -> 10.35; but
          // 32x128256 19.73 -> 24.62, its 128 registers leaving room for one
          // 512-thread block an SM instead of two).
          const C term = RowExp<T>::Plain(v - base_shift);
          const bool is_max = v - base_max == C(0);  // NaN, not 0, for v == max == +-inf
          pack_sum.ones += is_max ? C(1) : C(0);
          pack_sum.rest += is_max ? C(0) : term;
        } else {
          if constexpr (kFoldedTerms) {
            pack_sum.rest += base_term(v);
          } else {
            pack_sum.rest += RowExp<T>::Scaled(v - base_shift);
          }
        }
      }
      ones += pack_sum.ones;
      rest += pack_sum.rest;
    }
    if constexpr (kFoldedTerms) rest *= Exp2Small(-double{base_term.d});  // as the merge takes it
    forget_converted();
    MaxSum<C> total;
    if constexpr (kOneReduction) {
      total = ClusterMergeParts(MaxSum<C>{base_max, {ones, rest}}, warp_parts, &block_parts[parity]);
    } else {
      // log_softmax's ones ride along with rest: one reduction, not two
      // (softmax's ones are 0).
      double sums[kSums];
      sums[0] = rest;
      if constexpr (kLog) sums[kSums - 1] = ones;
      ClusterReduce(sums, warp_sums, block_sums, add_op);
      total = {base_max, {kLog ? sums[kSums - 1] : 0.0, sums[0]}};
    }
    const C max = total.max;
    const C shift = max == NegInf<C>() ? C(0) : max;
    // softmax: exp(v - max) * (1 / sum); log_softmax: (v - max) - log(sum).
    const ClusterTerm term = ClusterTerm::Of(shift);
    const C scale =  // kFoldedTerms: the terms carry 2^d
        kFoldedTerms ? C(1) / static_cast<C>((total.sum.ones + total.sum.rest) * Exp2Small(double{term.d}))
                     : total.sum.template Scale<C>(kLog);
    P* outr = reinterpret_cast<P*>(out + row * out_stride);
#pragma unroll
    for (int s = 0; s < kPacks; ++s) {
      const int64_t p = first_pack + s * kThreads;
      if (p < packs) {
        P pack;
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const C v = LoadLane(cache[s], k);
          C y;
          if constexpr (kLog) {
            y = (v - max) - scale;
          } else if constexpr (kFoldedTerms) {
            y = term(v) * scale;
          } else {
            y = RowExp<T>::Scaled(v - shift) * scale;
          }
          pack.lane[k] = Types::Store(y);
        }
        outr[p] = pack;
      }
    }
  }
  cluster.sync();  // no block exits while another may still read its slots
#endif
}

// Packs a thread of the cluster kernel holds at most: 16 float32 ones
// (4-lane packs), 8 of 16-bit values (see ClusterRowsKernel).
template <int kVec>
constexpr int kClusterThreadMaxPacks = kVec == 4 ? 16 : 8;

// The largest row the cluster kernel holds: kClusterMax blocks of 512
// threads with kClusterThreadMaxPacks each (262144 values of every type).
// float32 rows of 128K-256K values (151936: Qwen's vocabulary) took the
// online kernel at 8 packs, reading x twice (H100, graph replay: 1x151936
// 16.8 -> 8.9 us, torch.compile 8.2).
template <int kVec>
constexpr int64_t kClusterRowMaxPacks = int64_t{kClusterMax} * 512 * kClusterThreadMaxPacks<kVec>;

// The launch shape of a row of `packs` packs: the first (threads, packs per
// thread) of (256, 4), (256, 8), (512, 8), (512, 16: float32 only), with
// the smallest cluster (2, 4 or 8 blocks) that holds it: few registers,
// then few blocks to merge. Softmax() may then take 16 blocks of 5, 6 or 8
// packs for float32 (WithWideClusterPacks).
struct ClusterShape {
  int blocks;  // per cluster (per row)
  int threads;
  int packs;   // per thread
  // 512 threads x 8 float32 packs held to 64 registers, two blocks an SM:
  // for rows that would otherwise take a second wave of clusters.
  bool two_per_sm = false;
  bool one_reduction = false;  // ClusterRowsKernel's kOneReduction
  int BlocksPerSm() const { return threads <= 256 || two_per_sm ? 2 : 1; }
};

// Rows a cluster kernel call takes at most: as many clusters as the SMs
// hold at once, times this. float32 rows: two waves of clusters, which read
// x once where the online kernel reads it twice and exps each value twice
// at full precision (H100, graph replay, 32 x 128256: softmax 45.4 ->
// 21.7 us, log_softmax 35.6 -> 24.6; 32 x 151936: 51.0 -> 30.1, 40.3 ->
// 34.4; benchmarks/results/h100-2026-11-28-stop43). 16-bit rows, whose
// online kernel exps on the MUFU unit: one wave (two: 32 x 151936 bfloat16
// softmax 17.1 -> 21.9 us, log_softmax 17.8 -> 26.2). More waves lose: each
// pays a row's whole latency of cluster barriers (4096x128256 bfloat16:
// 2.58 ms, against 1.37 online).
template <int kVec>
constexpr int64_t kClusterWaves = kVec == 4 ? 2 : 1;

template <int kVec>
ClusterShape PickClusterShape(int64_t packs) {
  constexpr int kShapes[4][2] = {{256, 4}, {256, 8}, {512, 8}, {512, 16}};
  for (const auto& shape : kShapes) {
    if (shape[1] > kClusterThreadMaxPacks<kVec>) break;
    for (int c = 2; c <= kClusterMax; c *= 2) {
      if (packs <= int64_t{c} * shape[0] * shape[1]) return {c, shape[0], shape[1]};
    }
  }
  return {kClusterMax, 512, kClusterThreadMaxPacks<kVec>};  // callers check packs <= kClusterRowMaxPacks
}

// Rows the register kernel would give a whole 1024-thread block
// (16K-32K values), when rows x 2 blocks fit the SMs at once (a decode
// step's logits): a cluster of 8 (else 4, else 2) 256-thread blocks per row,
// of 2-16 packs a thread, in one reduction (kOneReduction), so that a row's
// exps run on 2-8 SMs' MUFU units instead of one (each thread holds 16 to 64
// values, against 32, though the cluster kernel exps each value twice).
// H100, bfloat16 x 32000, graph replay: 1 row 4.26 us on 8 blocks of 2
// packs (4.43 on 4 of 4) against 5.01 in one 1024-thread block (Liger:
// 4.85); 32 rows 5.62 on 4 blocks against 5.73 (8 blocks: 6.01). float32
// rows take it too (1, 32 x 32000 trailed Liger at 0.88, 0.93 in one block);
// on 2 blocks, 256 threads of 16 packs (two blocks an SM) rather than 512 of
// 8: softmax 48x32000 8.30 -> 7.20 us, 64x32000 8.31 -> 7.64, log_softmax
// 9.03 -> 8.40, 9.07 -> 8.90 (run 1, two reductions). 16-bit rows take no
// 2-block cluster: 33-66 rows then run as more rows do, one 1024-thread
// block a row, like Liger: bfloat16 softmax 48x32000 5.63 -> 5.14, 64x32000
// 5.84 -> 5.35, log_softmax 6.16 -> 5.92, 6.33 -> 6.12 (Liger's softmax
// 5.47, 5.71; benchmarks/results/h100-2026-12-06-stop60, run 1). float32
// rows at 34-66 lost on 4 blocks of 8 packs two blocks an SM, against 2
// blocks of 16 packs one an SM: softmax 64x32000 7.66 -> 8.35 us, 66x32000
// 7.81 -> 8.37, log_softmax 64x32000 8.67 -> 11.28, as if the GPCs held
// fewer than 64 such clusters at once; log_softmax 48x32000 gained (8.15 ->
// 7.62), softmax stayed level (7.15 -> 7.18; benchmarks/results/
// h100-2026-12-06-stop63, run 1, C).
// blocks == 0: none.
template <int kVec>
ClusterShape PickFewRowsClusterShape(int64_t rows, int64_t packs, int64_t sms) {
  constexpr int kMinBlocks = kVec == 8 ? 4 : 2;
  for (const int blocks : {8, 4, 2}) {
    if (blocks < kMinBlocks || rows * blocks > sms) continue;
    int per_thread = 2;
    while (per_thread < kClusterThreadMaxPacks<kVec> && packs > int64_t{blocks} * 256 * per_thread) {
      per_thread *= 2;
    }
    if (packs <= int64_t{blocks} * 256 * per_thread) return {blocks, 256, per_thread, false, true};
  }
  return {};
}

// Whether the GPU holds `rows` clusters of 16 blocks of kKernel (512
// threads) at once. 16 is past the portable limit: allowed per kernel and
// device by an attribute, and held where an SM partition (GPC) has 16 SMs
// free. Asked once per device (a driver call and an occupancy query).
template <void (*kKernel)(const float*, float*, int64_t, int64_t, int64_t, int64_t)>
bool HoldsWideClustersOf(const DeviceScope& scope, int64_t rows) {
  using Tag = std::integral_constant<decltype(kKernel), kKernel>;
  const int held = CachedPerDevice<Tag>(scope.device_id(), [&] {
    if (cudaFuncSetAttribute(kKernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
      cudaGetLastError();  // an unsupported size is an answer, as in ResidentClusters
      return 0;
    }
    return ResidentClusters(scope, kKernel, 16, 512, 0);
  });
  return rows <= held;
}

// Clusters of 16 blocks take float32 rows of 128K-256K values (32769-65536
// packs) on 512 threads of 5, 6 or 8 packs a thread, the fewest that hold
// the row. At 8 packs, a row of 151936 values left the last 3 of each
// thread's packs -inf (padding), whose exps and sums the kernel still
// takes. H100, graph replay, µs, 8 packs -> the fewest: 1x151936 (5)
// softmax 7.64 -> 7.10, log_softmax 9.40 -> 8.22 (torch.compile 7.96);
// 1x180000 (6) 7.74 -> 7.60, 9.55 -> 8.88; 1x201088 (7) 8.04 -> 8.21, 9.80
// -> 9.77, so rows that need 7 take 8 (benchmarks/results/
// h100-2026-12-06-stop59, run 2). Calls fn(std::integral_constant<int, kPacks>).
template <class Fn>
auto WithWideClusterPacks(int packs, Fn&& fn) {
  switch (packs) {
    case 5: return fn(Int<5>{});
    case 6: return fn(Int<6>{});
    default: return fn(Int<8>{});
  }
}
constexpr int64_t kWideClusterThreadPacks = 16 * 512;  // a row's packs over its 16 x 512 threads

bool HoldsWideClusters(const DeviceScope& scope, int64_t rows, int packs, bool log) {
  return WithWideClusterPacks(packs, [&](auto packs_tag) {
    constexpr int kPacks = decltype(packs_tag)::value;
    return log ? HoldsWideClustersOf<ClusterRowsKernel<float, 4, 512, kPacks, true>>(scope, rows)
               : HoldsWideClustersOf<ClusterRowsKernel<float, 4, 512, kPacks, false>>(scope, rows);
  });
}

template <class T, int kVec>
void LaunchClusterRows(const DeviceScope& scope, const ClusterShape& shape, const T* x, T* out,
                       int64_t rows, int64_t cols, int64_t x_stride, int64_t out_stride, bool log) {
  const LaunchShape launch_shape{dim3(static_cast<unsigned>(rows * shape.blocks)),  // a cluster a row
                                 dim3(static_cast<unsigned>(shape.threads)), 0,
                                 static_cast<unsigned>(shape.blocks)};
  const auto launch = [&](auto threads_tag, auto packs_tag, auto per_sm_tag, auto one_reduction_tag) {
    constexpr int kThreads = decltype(threads_tag)::value, kPacks = decltype(packs_tag)::value;
    constexpr int kPerSm = decltype(per_sm_tag)::value;
    constexpr bool kOne = decltype(one_reduction_tag)::value;
    const auto kernel = log ? ClusterRowsKernel<T, kVec, kThreads, kPacks, true, kPerSm, kOne>
                            : ClusterRowsKernel<T, kVec, kThreads, kPacks, false, kPerSm, kOne>;
    LaunchDependent(scope, kernel, launch_shape, x, out, rows, cols, x_stride, out_stride);
  };
  constexpr std::true_type kOne;
  constexpr std::false_type kTwo;
  if (shape.one_reduction) {  // PickFewRowsClusterShape's: 256 threads of 2, 4, 8 (or 16) packs
    if (shape.packs == 2) return launch(Int<256>{}, Int<2>{}, Int<2>{}, kOne);
    if (shape.packs == 4) return launch(Int<256>{}, Int<4>{}, Int<2>{}, kOne);
    if constexpr (kClusterThreadMaxPacks<kVec> == 16) {
      if (shape.packs == 16) return launch(Int<256>{}, Int<16>{}, Int<2>{}, kOne);
    }
    return launch(Int<256>{}, Int<8>{}, Int<2>{}, kOne);
  }
  if constexpr (kClusterThreadMaxPacks<kVec> == 16) {
    if (shape.packs == 16) return launch(Int<512>{}, Int<16>{}, Int<1>{}, kTwo);
    if (shape.two_per_sm) return launch(Int<512>{}, Int<8>{}, Int<2>{}, kTwo);
    if (shape.blocks == 16) {
      return WithWideClusterPacks(shape.packs,
                                  [&](auto packs_tag) { launch(Int<512>{}, packs_tag, Int<1>{}, kTwo); });
    }
  }
  if (shape.threads == 512) return launch(Int<512>{}, Int<8>{}, Int<1>{}, kTwo);
  if (shape.packs == 8) return launch(Int<256>{}, Int<8>{}, Int<2>{}, kTwo);
  return launch(Int<256>{}, Int<4>{}, Int<2>{}, kTwo);
}

// The row's (max, sum) over the blocks of this block's cluster: each block's
// total through its shared slot, merged by every thread in rank order (the
// same bits in every block). Called by all threads of the cluster.
template <class C>
__device__ __forceinline__ MaxSum<C> ClusterMerge(const MaxSum<C>& total, MaxSum<C>* slot) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) *slot = total;
  cluster.sync();
  MaxSum<C> merged = *cluster.map_shared_rank(slot, 0);
  for (int r = 1; r < static_cast<int>(cluster.num_blocks()); ++r) {
    merged.Merge(*cluster.map_shared_rank(slot, r));
  }
  cluster.sync();  // every block has read every slot before one is written again
  return merged;
#else
  return total;
#endif
}

// The row's (max, sum) over the `slices` blocks of a cooperative grid that
// share it (RowSplit::kGrid), with no memory but the output's own: each
// block parks its total in the first bytes of its slice of the row's output
// (`row_out`, 8-byte aligned; slices `slice_cols` long, a multiple of 16
// bytes, each longer than a MaxSum), the grid syncs, every block merges all
// of them in one order (the same bits in every block), the grid syncs
// again, and each block puts back the bytes it displaced (x's own values
// when the op runs in place). The slots are read past L1 (__ldcg): a block
// may hold the line of a neighbour's slot from its own x. Called by all
// threads of the grid.
template <class T, class C>
__device__ __forceinline__ MaxSum<C> GridMerge(const MaxSum<C>& total, T* row_out, int64_t slice_cols,
                                               int slices, int slice, MaxSum<C>* shared) {
  using Word = unsigned long long;  // __ldcg's 8-byte type
  using Words = Word[3];
  static_assert(sizeof(MaxSum<C>) == sizeof(Words), "a slot is three 8-byte words");
  const auto slot = [&](int s) { return reinterpret_cast<Word*>(row_out + s * slice_cols); };
  Word displaced[3];
  if (threadIdx.x == 0) {
    const auto* words = reinterpret_cast<const Word*>(&total);
    for (int k = 0; k < 3; ++k) {
      displaced[k] = __ldcg(slot(slice) + k);
      __stcg(slot(slice) + k, words[k]);
    }
  }
  cooperative_groups::this_grid().sync();
  MaxSum<C> acc = MaxSum<C>::Empty();
  if (threadIdx.x < slices) {
    Word words[3];
    for (int k = 0; k < 3; ++k) words[k] = __ldcg(slot(threadIdx.x) + k);
    memcpy(&acc, words, sizeof(words));
  }
  const MaxSum<C> merged = BlockMerge(acc, shared);
  cooperative_groups::this_grid().sync();  // every slot read before one is restored
  if (threadIdx.x == 0) {
    for (int k = 0; k < 3; ++k) __stcg(slot(slice) + k, displaced[k]);
  }
  __syncthreads();
  return merged;
}

// How the online kernel's blocks share rows: one block a row; a cluster a
// row (sm_90+); or a cooperative grid of `slices` blocks a row (GridMerge).
enum class RowSplit { kNone, kCluster, kGrid };

// kVec > 1 requires each row of x and of out to share their offset within 16
// bytes, so one head length aligns both. With a split, several blocks take
// each row, each block a slice of it (a multiple of 16 bytes long, so that
// every slice keeps the row's alignment), and the slices' (max, sum) merge
// over the cluster (ClusterMerge) or the grid (GridMerge): few rows too long
// for any SM's registers and shared memory then use several SMs each.
template <class T, int kVec, RowSplit kSplit>
__global__ void __launch_bounds__(kMaxBlockThreads)
    BlockRowsKernel(const T* x, T* out, int64_t rows, int64_t cols, int64_t x_stride,
                    int64_t out_stride, bool log) {
  WaitForPriorGrids();
  AllowDependentGrids();
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  using P = Pack<T, kVec>;
  __shared__ MaxSum<C> shared[33];
  __shared__ MaxSum<C> cluster_slot;
  int64_t slices = 1, slice = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (kSplit == RowSplit::kCluster) {
    const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    slices = cluster.num_blocks();
    slice = cluster.block_rank();
  }
#endif
  if constexpr (kSplit == RowSplit::kGrid) {  // gridDim.x = rows x slices: no row loop
    slices = gridDim.x / rows;
    slice = blockIdx.x % slices;
  }
  constexpr int64_t kAlign = 16 / sizeof(T);
  const int64_t slice_cols = (cols + slices * kAlign - 1) / (slices * kAlign) * kAlign;
  const int64_t begin = std::min(cols, slice * slice_cols);
  const int64_t n = std::min(cols, begin + slice_cols) - begin;
  for (int64_t row = blockIdx.x / slices; row < rows; row += gridDim.x / slices) {
    const T* xr = x + row * x_stride + begin;
    T* outr = out + row * out_stride + begin;
    const auto addr = reinterpret_cast<uintptr_t>(xr);
    const int64_t head =
        kVec == 1 ? 0 : std::min<int64_t>(n, ((16 - addr % 16) % 16) / sizeof(T));
    MaxSum<C> acc = MaxSum<C>::Empty();
    ForEachOwned<T, kVec>(
        n, head,
        [&](int64_t i) {
          const C v[1] = {Types::Load(xr[i])};
          acc.Add(v);
        },
        [&](int64_t i) {
          const P pack = *reinterpret_cast<const P*>(xr + i);
          C v[kVec];
#pragma unroll
          for (int k = 0; k < kVec; ++k) v[k] = LoadLane(pack, k);
          acc.Add(v);
        });
    MaxSum<C> total = BlockMerge(acc, shared);
    if constexpr (kSplit == RowSplit::kCluster) total = ClusterMerge(total, &cluster_slot);
    if constexpr (kSplit == RowSplit::kGrid) {
      total = GridMerge(total, out + row * out_stride, slice_cols, static_cast<int>(slices),
                        static_cast<int>(slice), shared);
    }
    const C scale = total.sum.template Scale<C>(log);
    ForEachOwned<T, kVec>(
        n, head,
        [&](int64_t i) { outr[i] = Types::Store(SoftmaxValue(Types::Load(xr[i]), total.max, scale, log)); },
        [&](int64_t i) {
          const P pack = *reinterpret_cast<const P*>(xr + i);
          P result;
#pragma unroll
          for (int k = 0; k < kVec; ++k) {
            result.lane[k] = Types::Store(SoftmaxValue(LoadLane(pack, k), total.max, scale, log));
          }
          *reinterpret_cast<P*>(outr + i) = result;
        });
  }
}

// Blocks per row for the online kernel: a cluster of 2-8 (the portable
// limit) when rows x that many blocks fit the SMs, so that a few rows too
// long for the on-chip kernels still use the GPU; else 1. H100, bfloat16,
// graph replay, one block a row: 1x1048576 308 us (torch.compile 14.8),
// 4x4194304 1304 (791).
int OnlineRowBlocks(const DeviceScope& scope, int64_t rows) {
  if (!scope.HasClusters() || rows == 0) return 1;
  int blocks = kClusterMax;
  while (blocks > 1 && rows * blocks > scope.Multiprocessors()) blocks /= 2;
  return blocks;
}

// Slices a row of the cooperative online kernel takes at most: each at least
// this many values, so that even the last one (shorter by the rounding of
// every slice to 16 bytes) holds GridMerge's slot.
constexpr int64_t kGridSliceMinCols = 4096;

// Blocks a row for the cooperative online kernel (RowSplit::kGrid), or 0
// where it does not apply: a few rows of over 2 x kGridSliceMinCols values
// on a GPU with cooperative launch, where each row gets at least twice the
// blocks a cluster gives it (1-8 rows on 132 SMs; more rows keep the
// cluster's cheaper syncs), one 1024-thread block an SM (all resident at
// once, as grid-wide syncs require). H100, bfloat16, graph replay, clusters of
// 8 -> the grid: 1x1048576 53.0 -> 16.5 us (torch.compile 14.8), 4x4194304
// 189.1 -> 66.1 (torch.compile 94.5).
int GridRowSlices(const DeviceScope& scope, int64_t rows, int64_t cols, int cluster) {
  if (rows == 0 || !scope.HasCooperativeLaunch()) return 0;
  const int64_t slices = std::min<int64_t>(scope.Multiprocessors() / rows, cols / kGridSliceMinCols);
  return slices >= 2 * cluster ? static_cast<int>(slices) : 0;
}

// The online kernel over `rows` rows: kVec-packed, or element by element.
template <class T, int kVec>
void LaunchBlockRows(const DeviceScope& scope, int threads, const T* x, T* out, int64_t rows,
                     int64_t cols, int64_t x_stride, int64_t out_stride, bool log) {
  const int cluster = OnlineRowBlocks(scope, rows);
  // GridMerge's slots: 8-byte words at every slice of every row of out.
  const bool slots_aligned = reinterpret_cast<uintptr_t>(out) % 8 == 0 &&
                             (rows == 1 || out_stride * sizeof(T) % 8 == 0);
  const int slices = kVec > 1 && slots_aligned ? GridRowSlices(scope, rows, cols, cluster) : 0;
  if (slices > 0) {
    LaunchShape shape{dim3(static_cast<unsigned>(rows * slices)), dim3(kMaxBlockThreads)};
    shape.cooperative = true;
    LaunchDependent(scope, BlockRowsKernel<T, kVec, RowSplit::kGrid>, shape, x, out, rows, cols,
                    x_stride, out_stride, log);
  } else if (cluster == 1) {
    const int blocks = scope.StreamingBlocks(rows, 1);  // one row per block, SM-bounded
    LaunchDependent(scope, BlockRowsKernel<T, kVec, RowSplit::kNone>, blocks, threads, x, out, rows,
                    cols, x_stride, out_stride, log);
  } else {
    LaunchDependent(scope, BlockRowsKernel<T, kVec, RowSplit::kCluster>,
                    LaunchShape{dim3(static_cast<unsigned>(rows * cluster)),  // one cluster per row
                                dim3(static_cast<unsigned>(threads)), 0, static_cast<unsigned>(cluster)},
                    x, out, rows, cols, x_stride, out_stride, log);
  }
}

int BlockThreads(int64_t packs) {
  int threads = 128;
  while (threads < kMaxBlockThreads && threads * 4 < packs) threads *= 2;
  return threads;
}

}  // namespace

void Softmax(const SoftmaxArgs& a) {
  DeviceScope scope(a.device);
  VisitCudaType(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    const auto* x = static_cast<const T*>(a.x);
    auto* out = static_cast<T*>(a.out);
    const auto x_addr = reinterpret_cast<uintptr_t>(x), out_addr = reinterpret_cast<uintptr_t>(out);
    // Every row start 16-byte aligned.
    const bool packed = x_addr % 16 == 0 && out_addr % 16 == 0 && a.cols % kVec == 0 &&
                        a.x_stride % kVec == 0 && a.out_stride % kVec == 0;
    // Rows longer than the register kernel holds (the online kernel's, which
    // reads x twice), when there are few of them: each row over a cluster,
    // so that a decode step's few logits rows use several SMs each and are
    // read once. With more rows than that fills the GPU at once, one block
    // per row (the online kernel) is faster: the cluster's per-row latency
    // (three cluster barriers, every value exp'd twice) is not hidden
    // (measured: 4096x128256 bf16 2.58 ms against 1.37 ms). Few rows of
    // 16K-32K values take a cluster too (PickFewRowsClusterShape).
    const int64_t packs = a.cols / kVec;
    bool cluster = false;
    if constexpr (kVec > 2) {  // not float64: its 2-lane packs would need 2x the registers
      if (packed && scope.HasClusters()) {
        ClusterShape shape{};
        if (packs > kRegisterRowMaxPacks<kVec> && packs <= kClusterRowMaxPacks<kVec>) {
          shape = PickClusterShape<kVec>(packs);
          cluster = a.rows * shape.blocks <=
                    kClusterWaves<kVec> * shape.BlocksPerSm() * scope.Multiprocessors();
          if constexpr (kVec == 4) {
            // float32 rows of 128K-256K values: on 16 blocks of 5, 6 or 8
            // packs a thread where the GPU holds that many such clusters at
            // once (non-portable size), else 8 blocks of 16 packs.
            if (shape.packs == 16) {
              const int needed =
                  static_cast<int>((packs + kWideClusterThreadPacks - 1) / kWideClusterThreadPacks);
              // The packs of the kernel WithWideClusterPacks takes for them.
              const int wide_packs =
                  WithWideClusterPacks(needed, [](auto packs_tag) { return decltype(packs_tag)::value; });
              if (HoldsWideClusters(scope, a.rows, wide_packs, a.log)) shape = {16, 512, wide_packs};
            }
            // Rows of 512 threads x 8 packs past one wave of clusters: two
            // blocks an SM at 64 registers, one wave again.
            shape.two_per_sm = shape.blocks <= kClusterMax && shape.threads == 512 && shape.packs == 8 &&
                               a.rows * shape.blocks > scope.Multiprocessors();
          }
        } else if (packs > int64_t{kMaxBlockThreads / 2} * kPacksMax<kVec>) {
          shape = PickFewRowsClusterShape<kVec>(a.rows, packs, scope.Multiprocessors());
          cluster = shape.blocks > 0;
        }
        if (cluster) {
          LaunchClusterRows<T, kVec>(scope, shape, x, out, a.rows, a.cols, a.x_stride, a.out_stride,
                                     a.log);
        }
      }
    }
    // Rows too long for the register kernel, and, when there are more rows
    // than SMs, rows it would give 1024 threads (one row per SM): the shared
    // kernel, where it holds them. With fewer rows, a 1024-thread row is the
    // shorter latency (32 x 32000 bfloat16: 5.9 against 6.8 us in 512-thread
    // blocks; 256 rows: 12.8 against 11.3).
    // Many rows past an SM: the shared kernel on clusters, where they hold them.
    SharedRowShape shared;
    if constexpr (kVec > 2) {
      const bool needs_sm = packs > int64_t{kMaxBlockThreads / 2} * kPacksMax<kVec>;
      if (packed && !cluster &&
          (packs > kRegisterRowMaxPacks<kVec> || (needs_sm && a.rows > scope.Multiprocessors()))) {
        shared = PickSharedRowShape(scope, a.rows, packs);
        if (shared.slots == 0 && scope.HasClusters() && OnlineRowBlocks(scope, a.rows) == 1) {
          shared = PickClusteredSharedRowShape(scope, a.rows, packs);
        }
      }
    }
    const auto launch_shared = [&] {
      if constexpr (kVec > 2) {
        return LaunchSharedRows<T, kVec>(scope, shared, x, out, a.rows, a.cols, a.x_stride,
                                         a.out_stride, a.log);
      }
      return false;
    };
    if (cluster) {
    } else if (shared.slots > 0 && launch_shared()) {
    } else if (packed && packs <= kRegisterRowMaxPacks<kVec>) {
      LaunchRegisterRows<T, kVec>(scope, x, out, a.rows, a.cols, a.x_stride, a.out_stride, a.log);
    } else if (!packed && a.cols <= kRegisterRowMaxPacks<1>) {
      LaunchRegisterRows<T, 1>(scope, x, out, a.rows, a.cols, a.x_stride, a.out_stride, a.log);
    } else {
      // Rows of x and out at the same offset within 16 bytes, row after row.
      const bool same_offsets = x_addr % 16 == out_addr % 16 &&
                                (a.x_stride - a.out_stride) * int64_t{sizeof(T)} % 16 == 0;
      if (same_offsets) {
        LaunchBlockRows<T, kVec>(scope, BlockThreads(a.cols / kVec), x, out, a.rows, a.cols,
                                 a.x_stride, a.out_stride, a.log);
      } else {
        LaunchBlockRows<T, 1>(scope, BlockThreads(a.cols), x, out, a.rows, a.cols, a.x_stride,
                              a.out_stride, a.log);
      }
    }
    CheckLaunch();
  });
}

}  // namespace cuda
}  // namespace hetkern
