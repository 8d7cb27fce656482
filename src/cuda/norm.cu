// CUDA kernels of rmsnorm, fused_add_rmsnorm (both also in Gemma's style) and
// layernorm. weight and bias are stored as T or (16-bit T) float32.
//
// A group of blockDim.x threads (one or more warps) normalises one row; a
// block holds blockDim.y such groups, so short rows still fill a block. Each
// thread takes the packs p = threadIdx.x + k * blockDim.x of its row: 16-byte
// packs when H and every pointer allow, else single elements. When the row
// fits, a thread keeps its packs in registers (kCache <= 4 of them, 8 in split
// whole-SM rows) between the reduction and the output pass, so x is read from
// memory once; longer rows (kCache == 0) are read again. How many packs a
// thread takes depends on the kernel and the row length (RowShape); where it
// depends on the number of rows too (split rows), the reduction tree does
// not, so neither do a row's bits. At
// decode sizes a thread's weight (and bias) packs are loaded with its row,
// before the reduction, so that their memory latency overlaps x's instead of
// following it (the kernel is a chain of such latencies); large calls spend
// those registers on more resident rows instead (ParamCache). One block
// takes one row tile (RowGrid). Reductions: each thread sums
// its packs in order, then a warp butterfly (every lane ends with the same
// bits), then the per-warp partials by a second butterfly or, in decode
// calls, by the same tree read from shared memory (one barrier per
// reduction); deterministic for a given launch shape. Kernels are launched
// as programmatic dependent launches (common.cuh).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_fp8.h>
#include <cuda_pipeline.h>

#include "src/core/fp8.h"
#include "src/core/kernels.h"
#include "src/cuda/elementwise.cuh"  // Pack
#include "src/cuda/quant_scale.cuh"

namespace hetkern {
namespace cuda {
namespace {

constexpr int kMaxRowThreads = 1024;
// Rows kept in registers use at most this many threads: their launch bounds
// then leave 128 registers a thread for the row's and the weight's packs (at
// 1024 threads, 64 registers spill them), except the longest rows, whose
// parameters are not kept (RowGrid::kWholeSm).
constexpr int kMaxCachedRowThreads = 512;
constexpr int kMaxCache = 4;  // packs per thread kept in registers

// Blocks of RowBlockBound threads that must fit an SM at once where blocks
// share SMs (RowGrid::kSeveralBlocksPerSm), which bounds a thread's registers
// to 65536 / (512 * blocks). Large calls need as many rows in flight per SM as
// their registers allow. Rows of parameters of x's type: the kernels of one
// input row (RowRegisters::kOneRow: the RMS norms, layernorm and their fp8
// forms) take 4, 3 and 2 such blocks at 1, 2 and 4 packs a thread (32, 40 and
// 64 registers: 16, 6 and 2 rows of 4096, 4096 and 16384 bfloat16 an SM;
// ptxas: no spills but 2-8 bytes in three fp8 layernorms), the fused kernels 2
// at 1-2 packs (they spill at 40; at 4 packs, at 64). Their parameters are
// then not kept in registers (ParamCache). H100, bfloat16, graph replay,
// against the former 2 blocks of 1-2 packs and 1 of 4 in SM-count grids:
// rmsnorm 16384x1024 22.0 us against 24.0, 16384x4096 90.6 / 94.7, 4096x16384
// 88.4 / 96.8, 256x16384 5.1 / 6.0 (Liger 22.0, 88.4, 88.2, 5.1);
// rmsnorm_quant 4096x16384 78.4 / 98.7, layernorm_quant 16384x4096 104.5 /
// 124.4 (benchmarks/results/h100-2026-11-25-rows, run 3 against the previous
// day's run). fused_add_rmsnorm_quant at 4 packs takes 2 blocks too: its 64
// registers spill nothing (the plain fused kernel's spill 32 bytes there, and
// it got slower: bfloat16 4096x16384 136.7 -> 149.0 us). H200, graph replay,
// µs, 1 block -> 2: bfloat16 16384x16384 490.4-491.5 -> 449.9-450.0
// (FlashInfer 452.8), 4096x16384 134.3-135.0 -> 128.2-128.4 (120.5); float32
// 16384x8192 427.5 -> 413.2 (benchmarks/results/h200-2026-11-28-stop46, run
// 2). Wider parameters (float32 for 16-bit x): 1.
enum class RowRegisters {
  kOneRow,      // x's packs: the RMS norms, layernorm and their fp8 forms
  kFused,       // x's and residual's, then the sum's: fused_add_rmsnorm (and Gemma's)
  kFusedQuant,  // x's and residual's until the output: fused_add_rmsnorm_quant
};
template <int kCache, class T, class W, RowRegisters kRegisters>
constexpr int RowBlocksPerSm() {
  if (!std::is_same_v<T, W>) return 1;
  switch (kRegisters) {
    case RowRegisters::kOneRow:  // 8 packs: split whole-SM rows (kSplitWholeSmRows)
      return kCache == 1 ? 4 : kCache == 2 ? 3 : kCache == 4 || kCache == 8 ? 2 : 1;
    case RowRegisters::kFused: return kCache == 1 || kCache == 2 ? 2 : 1;
    case RowRegisters::kFusedQuant:  // float64 spills at 4 packs
      return kCache == 0 || (kCache == 4 && sizeof(T) > 4) ? 1 : 2;
  }
  return 1;
}
// The RMS norm kernel's case: fused or not, quantising or not.
template <bool kFusedAdd, class O>
constexpr RowRegisters kRMSNormRegisters = !kFusedAdd                     ? RowRegisters::kOneRow
                                           : std::is_same_v<O, uint8_t> ? RowRegisters::kFusedQuant
                                                                        : RowRegisters::kFused;
constexpr int kMinBlockThreads = 128;  // short rows: several rows per block

// Typed pointers of one launch: x, residual of storage type T; weight and
// bias of W (T, or float for 16-bit T); out of O: T, or uint8_t (the quant
// ops' float8_e4m3fn bits of clamp(y / *scale), y unrounded in C).
template <class T, class W, class O = T>
struct Rows {
  using C = typename CudaTypes<T>::Compute;
  static constexpr bool kQuant = std::is_same_v<O, uint8_t>;
  const T* x;
  T* residual;
  const W* weight;
  const W* bias;
  O* out;
  const float* scale;  // kQuant only
  int64_t rows;
  int64_t hidden;
  C inv_hidden;  // 1 / hidden where that is exact (hidden a power of two), else 0
  C eps;
  int64_t x_stride;  // elements between rows (64-bit offsets: row * stride may pass 2^31)
  int64_t residual_stride;
  int64_t out_stride;

  // total / hidden, correctly rounded. Where 1 / hidden is a power of two the
  // product is the same correctly rounded value and spares the division's
  // instruction sequence on the path from the reduction to the output.
  __device__ __forceinline__ C PerElement(C total) const {
    return inv_hidden != 0 ? total * inv_hidden : total / static_cast<C>(hidden);
  }
};

// The quant ops' output: e4m3fn(clamp(y / scale, -448, 448)), NaN kept
// (comparisons with NaN are false); float64 y reaches e4m3 through float32,
// as torch converts float64. The quotient is torch's correctly rounded one:
// y * (1 / scale) alone may round differently (quant_scale.cuh).
template <class C>
__device__ __forceinline__ C ClampToE4M3(C v) {
  return v > C(kE4M3Max) ? C(kE4M3Max) : v < -C(kE4M3Max) ? -C(kE4M3Max) : v;
}

// A pack of outputs: rounded to O, or quantised (the quant ops, O = the
// e4m3fn bits). On sm_89+ pairs of float32 take the hardware conversion
// (cvt.rn.satfinite.e4m3x2.f32: round to nearest even, subnormals included,
// finite values beyond 448 and infinities saturated to +-448, so it is the
// clamp too) instead of ~15 integer instructions a lane. Its bits are
// F32ToE4M3Bits' of the clamped value except for NaN, which it gives as 0x7f
// whatever the sign, where torch keeps the sign. A NaN quotient comes from
// arithmetic, whose NaN sign is not specified (docs/norm.md), so its sign is
// not restored: OR-ing in every lane's sign bit cost the issue-bound quant
// kernels 3 instructions a value (H100, graph replay, against keeping it:
// layernorm_quant bfloat16 16384x4096 96.6 us against 101.5, rmsnorm_quant
// 76.6 / 79.4, float32 119.3 / 123.2; benchmarks/results/
// h100-2026-11-26-stop28, run 2).
template <class O, Division kWay = Division::kEither, int kLanes, class C>
__device__ __forceinline__ Pack<O, kLanes> StoreOutputs(const C (&y)[kLanes],
                                                          const QuantScale<C>& scale) {
  Pack<O, kLanes> o;
  if constexpr (std::is_same_v<O, uint8_t>) {
    C q[kLanes];
#pragma unroll
    for (int i = 0; i < kLanes; ++i) q[i] = scale.template Divide<kWay>(y[i]);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    constexpr bool kHardwarePairs = std::is_same_v<C, float> && kLanes % 2 == 0;
#else
    constexpr bool kHardwarePairs = false;  // sm_80 has no fp8 conversion instruction
#endif
    if constexpr (kHardwarePairs) {
      // The pairs are the pack's 16-bit halves as they are (little-endian:
      // q[i] in the low byte). Stored byte by byte, ptxas masked, shifted and
      // permuted each byte into place, ~4 instructions a value of these
      // issue-bound kernels (H100, bfloat16, graph replay, µs: layernorm_quant
      // 16384x4096 87.7-88.0 -> 81.7-82.4, 4096x16384 96.1-96.5 -> 88.4-89.3,
      // rmsnorm_quant 16384x4096 72.8-73.2 -> 71.0-71.4, 1x4096 1.92 -> 1.85;
      // benchmarks/results/h100-2026-11-27-stop36, run 1).
      __nv_fp8x2_storage_t pairs[kLanes / 2];
#pragma unroll
      for (int i = 0; i < kLanes; i += 2) {
        pairs[i / 2] =
            __nv_cvt_float2_to_fp8x2(make_float2(q[i], q[i + 1]), __NV_SATFINITE, __NV_E4M3);
      }
      memcpy(&o, pairs, sizeof(o));
    } else {
#pragma unroll
      for (int i = 0; i < kLanes; ++i) {
        o.lane[i] = F32ToE4M3Bits(static_cast<float>(ClampToE4M3(q[i])));
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kLanes; ++i) o.lane[i] = CudaTypes<O>::Store(y[i]);
  }
  return o;
}

// pass(DivisionTag<way>{}), a row's output pass: the quant kernels' with
// the scale's way of division tested once (QuantScale::WithDivision) and
// known in the pass, instead of a branch a value; the others' as it is.
// H100, bfloat16, graph replay, µs, a branch a value -> once: layernorm_quant
// 4096x16384 75.27 -> 73.31 (0.91 -> 0.94 of a copy), 16384x16384 286.5 ->
// 280.9, 16384x4096 73.5 -> 72.6; rmsnorm_quant and fused_add_rmsnorm_quant
// within 0.6 %, decode shapes within 0.02 (benchmarks/results/
// h100-2026-12-07-stop66, runs 1 and 3).
template <bool kQuant, class C, class Pass>
__device__ __forceinline__ void OutputPass(const QuantScale<C>& scale, Pass&& pass) {
  if constexpr (kQuant) {
    scale.WithDivision(pass);
  } else {
    pass(DivisionTag<Division::kEither>{});
  }
}

template <class C>
__device__ __forceinline__ C WarpSum(C v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// WarpSum of lanes holding partials[0..n) and zeros above (n <= kSlots <=
// 32), computed by every thread from shared memory: the butterfly's tree (at
// offset o, slot i takes slot i + o) evaluated directly, so that the sum
// waits on one round of shared loads instead of five dependent shuffles. The
// butterfly's levels above kSlots add zeros to the leaves, which only turns
// -0 into +0; the final + 0 does the same (a sum is -0 only if every term
// is), so the bits are WarpSum's.
template <int kSlots, class C>
__device__ __forceinline__ C SumPartials(const C* partials, int n) {
  C v[kSlots];
#pragma unroll
  for (int i = 0; i < kSlots; ++i) v[i] = i < n ? partials[i] : C(0);
#pragma unroll
  for (int offset = kSlots / 2; offset > 0; offset /= 2) {
#pragma unroll
    for (int i = 0; i < offset; ++i) v[i] += v[i + offset];
  }
  return v[0] + C(0);
}

// WarpSum of lanes holding partials[0..n) and zeros above (n <= kWidth, a
// power of two <= 16): the butterfly without its levels above kWidth, which
// only add zeros (each group of kWidth lanes holds the partials); as in
// SumPartials, the final + 0 gives WarpSum's bits.
template <int kWidth, class C>
__device__ __forceinline__ C ButterflyPartials(const C* partials, int n) {
  const int lane = threadIdx.x % kWidth;
  C v = lane < n ? partials[lane] : C(0);
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v + C(0);
}

// Sum over the threads of this row group of their partials; every thread
// gets the same bits. A thread holds kSplit partials: those of the threads
// threadIdx.x + i * blockDim.x (i < kSplit) of a row group kSplit times as
// wide, whose tree this is (a split row, see LayerNormKernel). Called by all
// threads of the block (it may synchronise the block). The per-warp partials
// go to `buffer`; one barrier per reduction suffices where the caller
// alternates two buffers, since a buffer is written again only after the
// next reduction's barrier, which every thread passes after reading it.
// kDirect (decode calls: kDecodeForm, whose time is a chain of latencies)
// sums up to 8 partials by SumPartials instead of a second butterfly, the
// same bits (H100, bfloat16, graph replay, with RegisterPacks' decode loads:
// rmsnorm 1x2048 1.52 -> 1.40 us, Liger 1.52; layernorm 1x2048 1.81 -> 1.62;
// benchmarks/results/h100-2026-11-26-stop30). Elsewhere its registers made
// kernels bounded to 32-40 of them spill, and the second butterfly skips
// the levels above the partials, which only add zeros.
template <bool kDirect, int kSplit, class C>
__device__ __forceinline__ C RowSum(const C (&partials)[kSplit], C (&buffer)[32]) {
  C v[kSplit];
#pragma unroll
  for (int i = 0; i < kSplit; ++i) v[i] = WarpSum(partials[i]);
  const int thread_warps = blockDim.x / 32, warps_per_row = thread_warps * kSplit;
  if (warps_per_row == 1) return v[0];  // uniform over the block: no barrier needed
  const int first = threadIdx.y * warps_per_row;
  if (threadIdx.x % 32 == 0) {
#pragma unroll
    for (int i = 0; i < kSplit; ++i) buffer[first + threadIdx.x / 32 + i * thread_warps] = v[i];
  }
  __syncthreads();
  // Branches uniform over the block, on the row shape.
  if constexpr (kDirect) {
    if (warps_per_row <= 2) return SumPartials<2>(buffer + first, warps_per_row);
    if (warps_per_row <= 4) return SumPartials<4>(buffer + first, warps_per_row);
    if (warps_per_row <= 8) return SumPartials<8>(buffer + first, warps_per_row);
    // 9-16 warps: 16 partials from shared memory were slower (rmsnorm
    // 1x8192 1.90 -> 2.25 us, stop 30 run 2); a butterfly of 4 levels
    // instead of 5: fused_add_rmsnorm 128x8192 3.01 -> 2.97 (stop 31 run 2).
  } else {
    if (warps_per_row <= 8) return ButterflyPartials<8>(buffer + first, warps_per_row);
  }
  if (warps_per_row <= 16) return ButterflyPartials<16>(buffer + first, warps_per_row);
  const int lane = threadIdx.x % 32;
  return WarpSum(lane < warps_per_row ? buffer[first + lane] : C(0));
}

template <bool kDirect, class C>
__device__ __forceinline__ C RowSum(C v, C (&buffer)[32]) {
  const C partials[1] = {v};
  return RowSum<kDirect>(partials, buffer);
}

// fn(slot, p) for each pack p of this thread's share of a row of `packs`
// packs. With kCache > 0 the launcher guarantees packs <= kCache * blockDim.x
// and `slot` is a compile-time register index after unrolling.
template <int kCache, class Fn>
__device__ __forceinline__ void ForThreadPacks(int64_t packs, Fn&& fn) {
  if constexpr (kCache > 0) {
    // 32-bit indices: packs <= kCache * blockDim.x <= 4096 here, and 64-bit
    // compares cost the issue-bound quant kernels an instruction or two a
    // slot and pass.
    const int row_packs = static_cast<int>(packs);
#pragma unroll
    for (int slot = 0; slot < kCache; ++slot) {
      const int p = threadIdx.x + slot * blockDim.x;
      if (p < row_packs) fn(slot, int64_t{p});
    }
  } else {
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) fn(0, p);
  }
}

// Packs a thread keeps in registers (kSlots of them), loaded by Load. Two
// ways, by the kind of call:
// - kDecode (kDecodeForm: decode calls, whose time is a chain of memory
//   latencies, but the quant ops): every slot is loaded (ForSlots),
//   unconditionally, by `asm volatile` in program order ("memory": not past
//   the stores that follow), into raw 32-bit words whose lanes are split
//   where used. Two things had made a thread wait for one load before
//   issuing the next
//   (SASS and stall samples of bfloat16 fused_add_rmsnorm 32-128x4096 and
//   layernorm 1x4096: benchmarks/results/h100-2026-11-26-stop29 run 9,
//   h100-2026-11-26-stop30 runs 1-3): a pack of 16-bit lanes loaded under a
//   condition (`if (p < packs) cache[slot] = x[p]`) was split into a
//   register per lane under the load's predicate, right after the load, so
//   the weight's wait came before the row's loads; and plain loads of a
//   thread's later slots were sunk into the branch that uses them, behind
//   the first slot's wait. ptxas did the same where a slot's values were
//   used only under `p < packs`, so decode calls' first pass uses every slot,
//   masked (ForSlots).
// - Otherwise (bandwidth-bound calls) plain loads of the slots inside the row
//   (p < packs): the decode form cost fused_add_rmsnorm 4096x16384 2.7 %
//   (186.5 -> 191.3 us, Liger 181.7; run 3).
template <class P, int kSlots, bool kDecode>
class RegisterPacks {
 public:
  __device__ __forceinline__ void Load(int slot, const P* src) {
    if constexpr (kDecode) {
      static_assert(sizeof(P) % 16 == 0, "cached packs are 16 or 32 bytes");
      auto* w = reinterpret_cast<uint32_t*>(&words_[slot]);
      const auto* from = reinterpret_cast<const char*>(src);
#pragma unroll
      for (int i = 0; i < int{sizeof(P) / 16}; ++i) {
        asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(w[4 * i]), "=r"(w[4 * i + 1]), "=r"(w[4 * i + 2]), "=r"(w[4 * i + 3])
                     : "l"(from + 16 * i)
                     : "memory");
      }
    } else {
      words_[slot] = *src;
    }
  }
  __device__ __forceinline__ void Set(int slot, const P& v) { memcpy(&words_[slot], &v, sizeof v); }
  __device__ __forceinline__ P operator[](int slot) const {
    P v;
    memcpy(&v, &words_[slot], sizeof v);
    return v;
  }

 private:
  using Words = std::conditional_t<kDecode, Pack<uint32_t, sizeof(P) / 4>, P>;
  Words words_[kSlots];
};

// fn(slot, p, in_row) for the slots a thread keeps in registers: with
// kDecode every slot, p clamped to the row's last pack and in_row = (p <
// packs) unclamped (RegisterPacks: no conditional loads; rows are never
// empty, the entries refuse H = 0), else those with p < packs, in_row true.
template <int kCache, bool kDecode, class Fn>
__device__ __forceinline__ void ForSlots(int64_t packs, Fn&& fn) {
  if constexpr (kDecode) {
#pragma unroll
    for (int slot = 0; slot < kCache; ++slot) {
      const int p = threadIdx.x + slot * blockDim.x, row_packs = static_cast<int>(packs);
      fn(slot, int64_t{p < row_packs ? p : row_packs - 1}, p < row_packs);
    }
  } else {
    ForThreadPacks<kCache>(packs, [&](int slot, int64_t p) { fn(slot, p, true); });
  }
}

// This thread's packs of a per-column parameter (weight, bias): with kCache
// > 0 in registers, loaded with the row's so that their memory latency
// overlaps the row's (decode calls: after the row's, run 4 of
// h100-2026-11-26-stop30: before them, fused_add_rmsnorm 1x4096 took 2.09
// us against 1.81, layernorm 2.05 / 1.89; large calls: before, as run 3
// measured); else read from memory where used.
template <int kCache, class P, bool kDecode>
class ParamPacks {
 public:
  __device__ explicit ParamPacks(const void* param) : param_(static_cast<const P*>(param)) {}
  __device__ __forceinline__ void Load(int64_t packs) {
    if constexpr (kCache > 0) {
      if (param_ == nullptr) return;
      ForSlots<kCache, kDecode>(packs,
                                [&](int slot, int64_t p, bool) { cache_.Load(slot, param_ + p); });
    }
  }
  // Pack p, this thread's `slot`; the parameter must not be null.
  __device__ __forceinline__ P Get(int slot, int64_t p) const {
    if constexpr (kCache > 0) {
      return cache_[slot];
    } else {
      return param_[p];
    }
  }

 private:
  const P* param_;
  RegisterPacks<P, (kCache > 0 ? kCache : 1), kDecode> cache_;
};

// Where a launch's blocks sit, which picks the kernel's instantiation (the
// same arithmetic in each: the same bits).
enum class RowGrid {
  // At most one block per SM (decode calls): no register bound. The bound
  // of several blocks an SM (RowBlocksPerSm) only costs such a call: H100,
  // bfloat16, graph replay, unbounded against bounded, fused_add_rmsnorm
  // 0.94-1.01 of Liger against 0.91-0.97 at x 4096 and x 8192, its Gemma
  // form 0.92-0.99 against 0.89-0.94, layernorm 0.95-1.00 against 0.91-0.99
  // (one run, benchmarks/results/h100-2026-11-24/run7-*).
  kOneBlockPerSm,
  // More blocks than SMs, one row tile each, as many resident as
  // RowBlocksPerSm's bound allows; the hardware starts a block as another
  // ends, which kept more bytes in flight than SM-count grids (x 16)
  // looping over row tiles, with or without each block's next row
  // prefetched to L2 (H100, bfloat16, graph replay: rmsnorm 16384x8192
  // 181.5 us against 191.3 looping and 196.5 prefetching, layernorm
  // 16384x8192 184.8 / 191.8 / 192.2, fused_add_rmsnorm 16384x8192 364.8 /
  // 378.0 / 388.8; benchmarks/results/h100-2026-11-25-rows, run 1).
  kSeveralBlocksPerSm,
  // One block of up to kMaxRowThreads threads an SM, each thread keeping
  // kMaxCache packs of its row in registers (64 of them; the parameters are
  // read in the output pass): rows of 2049-4096 packs (float32 8193-16384
  // values, 16-bit 16385-32768), which a kMaxCachedRowThreads block cannot
  // hold and which were streamed, read from memory two (RMS) or three
  // (layernorm) times. The fused kernels only for float32 (the others
  // spill: kRMSNormWholeSmRows). H100, float32 4096x16384, graph replay:
  // layernorm 180.9 us against 250.8 streamed (Liger 181.8), rmsnorm 181.5
  // / 191.2, gemma_rmsnorm 181.0 / 191.2
  // (benchmarks/results/h100-2026-11-26-stop28, run 1).
  // Large calls of some ops split these rows instead (kSplitWholeSmRows).
  kWholeSm,
};

template <int kCache, RowGrid kGrid>
constexpr int RowBlockBound() {
  return kGrid == RowGrid::kWholeSm || kCache == 0 ? kMaxRowThreads : kMaxCachedRowThreads;
}

template <int kCache, class T, class W, RowGrid kGrid, RowRegisters kRegisters>
constexpr int GridBlocksPerSm() {
  return kGrid == RowGrid::kSeveralBlocksPerSm ? RowBlocksPerSm<kCache, T, W, kRegisters>() : 1;
}

// Packs of weight (and bias) a thread keeps in registers, loaded with its
// row's before the reduction: kCache where a block has its SM's registers to
// itself (decode calls, whose time is the row's chain of memory latencies,
// and kernels bounded to one block an SM); none where blocks share an SM,
// which read them in the output pass (every
// row reads the same ones, from L1/L2) and leave their registers to more
// resident rows (RowBlocksPerSm).
template <int kCache, RowGrid kGrid, int kBlocksPerSm>
constexpr int ParamCache() {
  return kGrid != RowGrid::kWholeSm && kBlocksPerSm == 1 ? kCache : 0;
}

// launch(std::integral_constant<RowGrid, kGrid>) for a launch of `grid`
// blocks of `block`. Rows kept in registers (kCache > 0) have the first two
// instantiations, and kMaxCache-deep ones of kernels that hold such rows
// (kWholeSmRows) the third; streamed rows, whose kernels have no bound, one.
template <int kCache, bool kWholeSmRows, class Launch>
void WithRowGrid(const DeviceScope& scope, dim3 grid, dim3 block, Launch&& launch) {
  using std::integral_constant;
  if constexpr (kWholeSmRows && kCache == kMaxCache) {
    if (block.x > kMaxCachedRowThreads) {
      return launch(integral_constant<RowGrid, RowGrid::kWholeSm>{});
    }
  }
  if (kCache > 0 && int64_t{grid.x} <= scope.Multiprocessors()) {
    return launch(integral_constant<RowGrid, RowGrid::kOneBlockPerSm>{});
  }
  launch(integral_constant<RowGrid, RowGrid::kSeveralBlocksPerSm>{});
}

// Whole-SM rows (RowGrid::kWholeSm: one row of up to 1024 threads of 4 packs
// an SM) of the kernels that split rows (kSplit = 2: a thread does the work
// of two threads of the row's shape, the same reduction tree and bits) run
// on half the threads, 8 packs each, as RowGrid::kSeveralBlocksPerSm grids of
// two blocks an SM (64 registers, no spills in ptxas), where the call has
// more rows than SMs: one row's reductions, quotients and stores then overlap
// the other row's loads, where the SM had waited on them. Rows of even warp
// counts, parameters of x's type, not float64 (whose 8 packs would not fit).
// H200, graph replay, 4 input sets, µs, whole SM -> split
// (benchmarks/results/h200-2026-12-01-stop51, runs 2 and 3): float32
// rmsnorm_quant 16384x16384 371.3 -> 317.6, 4096x16384 102.8 -> 92.1;
// layernorm_quant 428.3 -> 343.8, 116.2 -> 101.0; layernorm (run 3)
// 16384x16384 530.5 -> 512.4, 8192x16384 270.1 -> 260.9, 4096x16384 139.2 ->
// 136.0 (Liger 549.7, 277.9, 141.9); bfloat16 4096x32768 rmsnorm 139.0 ->
// 132.8, layernorm 155.2 -> 137.3. Not split: float32 rmsnorm and
// gemma_rmsnorm, level or slower (16384x16384 507.4 -> 510.9, gemma
// 4096x16384 143.4 -> 147.7), and calls of at most one row an SM (float32
// rmsnorm 32x16384 3.42 -> 3.76).
template <class T, class W, int kCache, RowGrid kGrid>
constexpr bool kSplitWholeSmRows = std::is_same_v<T, W> && !std::is_same_v<T, double> &&
                                   kCache == kMaxCache && kGrid == RowGrid::kWholeSm;
inline bool SplitsWholeSmRows(const DeviceScope& scope, dim3 grid, dim3 block) {
  return block.y == 1 && block.x % 64 == 0 && int64_t{grid.x} > scope.Multiprocessors();
}

// The rows of this block, one per threadIdx.y, tile by tile over the grid.
// Every thread of the block runs every iteration (RowSum has barriers);
// threads past the last row take active == false.
template <class Fn>
__device__ __forceinline__ void ForBlockRows(int64_t rows, Fn&& fn) {
  for (int64_t first = int64_t{blockIdx.x} * blockDim.y; first < rows;
       first += int64_t{gridDim.x} * blockDim.y) {
    const int64_t row = first + threadIdx.y;
    fn(row, row < rows);
  }
}

// Large calls of rows kept in registers, one row tile a block
// (RowGrid::kWholeSm and kSeveralBlocksPerSm: grids past what the SMs hold,
// the hardware starting a block as another ends): the row a quarter of a
// wave of resident blocks further on, which starts soon after, is read into
// L2 now, so that the SMs keep reading from DRAM through each row's
// barriers and stores. Rows of whole packs (16-byte aligned, as the bulk
// prefetch needs). H200, graph replay, 4 input sets, µs, none -> a quarter
// of a wave (Liger): float32 rmsnorm 4096x16384 138.4 -> 131.6 (133.3),
// 16384x16384 538.3 -> 506.8, layernorm 4096x16384 156.8 -> 144.9 (141.7),
// 16384x16384 595.1 -> 523.7 (549.2); bfloat16 layernorm 16384x16384 275.7
// -> 262.1, fused_add_rmsnorm 4096x16384 146.4 -> 141.9 (132.3). A whole
// wave ahead was slower on some rows (bfloat16 rmsnorm 4096x16384 68.0 ->
// 70.6) and two waves on all (float32 rmsnorm 16384x16384 719): rows
// waiting in L2 were evicted before use. Streamed rows (kCache 0), which
// read their row again from L2, do not prefetch: float32 fused_add_rmsnorm
// 4096x16384 went from 0.98 of Liger to 0.83 with it
// (benchmarks/results/h200-2026-11-29-stop50).
constexpr int kPrefetchWaveFraction = 4;
constexpr int64_t kMaxPrefetchBytes = 1 << 20;  // a row's first MiB (the size is 32-bit)
template <int kBlocksPerSm, class T>
__device__ __forceinline__ void PrefetchNextRows(const T* base, int64_t stride, int64_t rows,
                                                 int64_t hidden) {
  if (base == nullptr || int64_t{gridDim.x} * blockDim.y < rows) return;  // blocks that loop
  unsigned sm_ids;  // the SMs' id range: their count, or a few more
  asm("mov.u32 %0, %%nsmid;" : "=r"(sm_ids));
  const int64_t ahead = int64_t{sm_ids} * kBlocksPerSm * blockDim.y / kPrefetchWaveFraction;
  const int64_t row = int64_t{blockIdx.x} * blockDim.y + threadIdx.y + (ahead > 0 ? ahead : 1);
  const int64_t bytes = hidden * static_cast<int64_t>(sizeof(T));
  const int64_t prefetched = bytes < kMaxPrefetchBytes ? bytes : kMaxPrefetchBytes;
  if (row < rows) PrefetchToL2(base + row * stride, static_cast<uint32_t>(prefetched));
}

// The quant ops' divisor (QuantScale), whose reciprocal is __frcp_rn's
// branchy sequence on the scale's load. Decode calls (kOneBlockPerSm) build
// it for each row once the row's loads are issued, so that neither delays
// them; large calls build it once, first, as per row it cost them registers
// and time. H100, bfloat16, graph replay, per row against first:
// rmsnorm_quant 1x4096 1.93 us against 2.11, fused_add_rmsnorm_quant 2.11 /
// 2.33, layernorm_quant 128x4096 2.67 / 2.82, but layernorm_quant 16384x4096
// 107.6 / 101.1 and rmsnorm_quant 82.4 / 79.5
// (benchmarks/results/h100-2026-11-26-stop28, run 1).
template <class C, RowGrid kGrid>
class RowQuantScale {
 public:
  __device__ explicit RowQuantScale(float value) : value_(value), first_(kPerRow ? 1.f : value) {}
  __device__ __forceinline__ QuantScale<C> ForRow() const {
    return kPerRow ? QuantScale<C>(value_) : first_;
  }

 private:
  static constexpr bool kPerRow = kGrid == RowGrid::kOneBlockPerSm;
  float value_;
  QuantScale<C> first_;  // unused (and not computed) where kPerRow
};

// Whether a kernel takes the decode form of its register loads
// (RegisterPacks) and of its reductions (RowSum): decode calls
// (RowGrid::kOneBlockPerSm, launched only for rows kept in registers) of
// the ops without fp8 output. The quant ops got slower with it, by the
// direct sums alone too (H100, bfloat16, graph replay, µs: layernorm_quant
// 1x4096 2.43 -> 2.58, fused_add_rmsnorm_quant 2.01 -> 2.13-2.19;
// benchmarks/results/h100-2026-11-26-stop30, runs 5-6).
template <RowGrid kGrid, int kCache, bool kQuant>
constexpr bool kDecodeForm = kGrid == RowGrid::kOneBlockPerSm && kCache > 0 && !kQuant;

// rmsnorm (kFusedAdd false) and fused_add_rmsnorm (true) with vLLM's
// roundings: the fused sum is rounded to T before it feeds the variance, and
// out = T(T(v * inv_rms) * weight); with kGemma, out = T(v * inv_rms * (1 +
// weight)), rounded once as Gemma's RMSNorm does. With O = uint8_t, the
// quant ops as FlashInfer's: y = v * inv_rms * weight unrounded, and the
// fused sum unrounded in the variance and y (residual still gets T(sum): in
// the first pass where the row is cached, in the second where it streams,
// since x and residual are read there again). kSplit > 1 (rows without a
// residual) splits a row as LayerNormKernel's: the same bits on fewer threads.
template <class T, class W, int kLanes, int kCache, bool kFusedAdd, bool kGemma, class O,
          RowGrid kGrid, int kSplit = 1>
__global__ void __launch_bounds__(RowBlockBound<kCache, kGrid>(),
                                  GridBlocksPerSm<kCache, T, W, kGrid, kRMSNormRegisters<kFusedAdd, O>>())
    RMSNormKernel(Rows<T, W, O> a) {
  static_assert(kSplit == 1 || (!kFusedAdd && kCache > 0), "split rows: one input row, cached");
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  using P = Pack<T, kLanes>;
  using PW = Pack<W, kLanes>;
  using PO = Pack<O, kLanes>;
  constexpr bool kQuant = Rows<T, W, O>::kQuant;
  __shared__ C partials[2][32];  // alternated row by row, as RowSum requires
  int turn = 0;
  // Decode calls (RegisterPacks, RowSum; WithRowGrid launches this grid only
  // for rows kept in registers), but for the quant ops, which both made
  // slower (kDecodeForm).
  constexpr bool kDecode = kDecodeForm<kGrid, kCache, kQuant>;
  WaitForPriorGrids();
  AllowDependentGrids();
  const RowQuantScale<C, kGrid> quant_scale(kQuant ? *a.scale : 1.f);
  const int64_t packs = a.hidden / kLanes;
  constexpr int kParamCache =
      ParamCache<kCache, kGrid, GridBlocksPerSm<kCache, T, W, kGrid, kRMSNormRegisters<kFusedAdd, O>>()>();
  ParamPacks<kParamCache, PW, kDecode> weight(a.weight);
  if constexpr (!kDecode) weight.Load(packs);  // decode calls: after the row's loads
  if constexpr (kGrid != RowGrid::kOneBlockPerSm && kCache > 0) {
    constexpr int kBlocksPerSm =
        GridBlocksPerSm<kCache, T, W, kGrid, kRMSNormRegisters<kFusedAdd, O>>();
    PrefetchNextRows<kBlocksPerSm>(a.x, a.x_stride, a.rows, a.hidden);
    if constexpr (kFusedAdd) {
      PrefetchNextRows<kBlocksPerSm>(a.residual, a.residual_stride, a.rows, a.hidden);
    }
  }
  ForBlockRows(a.rows, [&](int64_t row, bool active) {
    const auto* x = reinterpret_cast<const P*>(a.x + row * a.x_stride);
    auto* residual = reinterpret_cast<P*>(a.residual + row * a.residual_stride);
    auto* out = reinterpret_cast<PO*>(a.out + row * a.out_stride);
    RegisterPacks<P, (kCache > 0 ? kCache : 1), kDecode> cache;
    RegisterPacks<P, (kCache > 0 && kFusedAdd ? kCache : 1), kDecode> residual_cache;
    // All loads first: the compiler may not move a load of x above a store
    // to residual (they may alias), so loading slot by slot between the
    // stores would chain one memory latency per slot. A decode thread past
    // the last row loads that row (no conditional loads: RegisterPacks).
    if constexpr (kCache > 0) {
      const int64_t load_row = kDecode && !active ? a.rows - 1 : row;
      const auto* x_row = reinterpret_cast<const P*>(a.x + load_row * a.x_stride);
      const auto* residual_row = reinterpret_cast<const P*>(
          kFusedAdd ? a.residual + load_row * a.residual_stride : nullptr);
      if (kDecode || active) {
        ForSlots<kCache, kDecode>(packs, [&](int slot, int64_t p, bool) {
          cache.Load(slot, x_row + p);
          if constexpr (kFusedAdd) residual_cache.Load(slot, residual_row + p);
        });
      }
    }
    if constexpr (kDecode) weight.Load(packs);
    // This thread's pack p of x in the first pass; in the second, of what
    // it normalises: x, or for the plain fused op the rounded sum the first
    // pass stored (in the cache, or in residual).
    const auto row_pack = [&](int slot, int64_t p, bool second_pass) {
      if constexpr (kCache > 0) {
        return cache[slot];
      } else {
        return kFusedAdd && !kQuant && second_pass ? residual[p] : x[p];
      }
    };
    const auto residual_pack = [&](int slot, int64_t p) {
      if constexpr (kCache > 0 && kFusedAdd) {
        return residual_cache[slot];
      } else {
        return residual[p];
      }
    };
    // The first pass. Decode calls go through every slot and mask what is
    // outside the row (in_row false, and every slot of a thread past the last
    // row): with values used only under `p < packs`, ptxas sank the second
    // slot's loads into that branch, behind the first slot's wait (SASS of
    // bfloat16 fused_add_rmsnorm x4096, benchmarks/results/h100-2026-11-26-stop31).
    // H100, bfloat16, graph replay, us, before -> after (Liger):
    // fused_add_rmsnorm 8x4096 2.05 -> 1.80 (1.87), 128x8192 3.10 -> 3.02
    // (2.97); rmsnorm 128x4096 1.96 -> 1.89 (2.06).
    C sum_sq[kSplit] = {};
    if (kDecode || active) {
      ForSlots<kCache, kDecode>(packs, [&](int slot, int64_t p, bool in_row) {
        in_row = in_row && active;
        P v = row_pack(slot, p, false);
        C value[kLanes];  // x, or the fused sum
#pragma unroll
        for (int i = 0; i < kLanes; ++i) value[i] = LoadLane(v, i);
        if constexpr (kFusedAdd) {
          const P r = residual_pack(slot, p);
#pragma unroll
          for (int i = 0; i < kLanes; ++i) value[i] += LoadLane(r, i);
          if constexpr (!kQuant) {  // vLLM: the sum rounded to T feeds the variance
#pragma unroll
            for (int i = 0; i < kLanes; ++i) {
              v.lane[i] = Types::Store(value[i]);
              value[i] = LoadLane(v, i);
            }
            if (in_row) residual[p] = v;
            if constexpr (kCache > 0) cache.Set(slot, v);
          } else if constexpr (kCache > 0) {
            // The quant op stores T(sum) here too, while the row reduces:
            // stored with out after the reduction, 16384x8192 took 401 us
            // against 390 (FlashInfer: 311; H100). x and residual stay
            // cached for the unrounded sum of the second pass.
            P rounded;
#pragma unroll
            for (int i = 0; i < kLanes; ++i) rounded.lane[i] = Types::Store(value[i]);
            if (in_row) residual[p] = rounded;
          }
        }
#pragma unroll
        for (int i = 0; i < kLanes; ++i) {
          const C term = in_row ? value[i] : C(0);  // + 0 * 0 leaves sum_sq's bits
          // spelled out: see LayerNormKernel's output
          sum_sq[slot % kSplit] = fma(term, term, sum_sq[slot % kSplit]);
        }
      });
    }
    const C row_sum_sq = RowSum<kDecode>(sum_sq, partials[turn]);
    turn ^= 1;  // the next row's reduction takes the other buffer
    const C inv_rms = C(1) / sqrt(a.PerElement(row_sum_sq) + a.eps);
    if (!active) return;
    const QuantScale<C> out_scale = quant_scale.ForRow();
    OutputPass<kQuant>(out_scale, [&](auto division) {
      ForThreadPacks<kCache>(packs, [&](int slot, int64_t p) {
        const P v = row_pack(slot, p, true);
        const PW w = weight.Get(slot, p);
        C value[kLanes];  // the normalised input: x, or the fused sum
#pragma unroll
        for (int i = 0; i < kLanes; ++i) value[i] = LoadLane(v, i);
        if constexpr (kFusedAdd && kQuant) {  // the unrounded sum redone from x and residual
          const P r = residual_pack(slot, p);
#pragma unroll
          for (int i = 0; i < kLanes; ++i) value[i] += LoadLane(r, i);
          if constexpr (kCache == 0) {  // streamed rows store T(sum) only now, once read twice
            P rounded;
#pragma unroll
            for (int i = 0; i < kLanes; ++i) rounded.lane[i] = Types::Store(value[i]);
            residual[p] = rounded;
          }
        }
        C y[kLanes];
#pragma unroll
        for (int i = 0; i < kLanes; ++i) {
          C normed = value[i] * inv_rms;
          if constexpr (!kGemma && !kQuant) normed = Types::Load(Types::Store(normed));
          const C weight_value = LoadLane(w, i);
          const C scale = kGemma ? C(1) + weight_value : weight_value;
          y[i] = normed * scale;
        }
        out[p] = StoreOutputs<O, decltype(division)::value>(y, out_scale);
      });
    });
  });
}

// Two-pass mean and variance in C, then out = (x - mean) * rstd * w + b.
// With kSplit > 1 (a split row, for large calls) each thread does the work
// of kSplit threads of the row's shape: its slot s holds the pack of thread
// threadIdx.x + (s % kSplit) * blockDim.x's slot s / kSplit (p = threadIdx.x
// + s * blockDim.x either way) and adds into that thread's partial, and
// RowSum reduces them by that shape's tree: the same bits on half the
// threads (kSplitRows says where and why).
template <class T, class W, int kLanes, int kCache, class O, RowGrid kGrid, int kSplit = 1,
          bool kStaged = false>
__global__ void __launch_bounds__(RowBlockBound<kCache, kGrid>(),
                                  GridBlocksPerSm<kCache, T, W, kGrid, RowRegisters::kOneRow>())
    LayerNormKernel(Rows<T, W, O> a) {
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  using P = Pack<T, kLanes>;
  using PW = Pack<W, kLanes>;
  using PO = Pack<O, kLanes>;
  // The mean's partials and the variance's: each row's two reductions
  // alternate them as RowSum requires.
  __shared__ C partials[2][32];
  // As in RMSNormKernel.
  constexpr bool kDecode = kDecodeForm<kGrid, kCache, Rows<T, W, O>::kQuant>;
  // The quant ops (float compute) keep a thread's row values, converted
  // once, where they are at most 32 (then x - mean), instead of x's packs,
  // which each of the three passes converted again: these kernels are
  // issue-bound at large shapes (Nsight Compute, bfloat16 16384x4096: 39.8
  // instructions a value against plain layernorm's 29.6, issue slots 84 %
  // busy). H100, graph replay, us: layernorm_quant bfloat16 16384x4096 96.3
  // -> 90.4, float32 138.0 -> 135.4, 1x4096 2.60 -> 2.55; ptxas spills 8
  // bytes there under the 40-register bound, which still beat 2 blocks an
  // SM without spills (96.8; float32 168.3). The RMS norms' quant kernels
  // spilled 80 bytes with their values kept (rmsnorm_quant 77.0 -> 99.4);
  // the plain kernels reach the copy limit as they are.
  // (benchmarks/results/h100-2026-11-27-stop34, runs 1-3.) 32 values (4
  // packs of 16-bit x) fit the 64 registers of 4-pack rows without spills:
  // bfloat16 4096x16384 77.8 -> 76.6-77.1 us (stop38, run 1).
  constexpr bool kKeepDeviations =
      Rows<T, W, O>::kQuant && std::is_same_v<C, float> && kCache > 0 && kCache * kLanes <= 32;
  WaitForPriorGrids();
  AllowDependentGrids();
  const RowQuantScale<C, kGrid> quant_scale(Rows<T, W, O>::kQuant ? *a.scale : 1.f);
  const int64_t packs = a.hidden / kLanes;
  constexpr int kParamCache =
      ParamCache<kCache, kGrid, GridBlocksPerSm<kCache, T, W, kGrid, RowRegisters::kOneRow>()>();
  ParamPacks<kParamCache, PW, kDecode> weight(a.weight), bias(a.bias);
  if constexpr (!kDecode) {  // decode calls: after the row's loads
    weight.Load(packs);
    bias.Load(packs);
  }
  if constexpr (kGrid != RowGrid::kOneBlockPerSm && kCache > 0 && !kStaged) {
    PrefetchNextRows<GridBlocksPerSm<kCache, T, W, kGrid, RowRegisters::kOneRow>()>(
        a.x, a.x_stride, a.rows, a.hidden);
  }
  // kStaged (kStagedRows: a grid of the blocks the SMs hold at once, each
  // taking rows in turn): each thread's packs of the block's next row are
  // copied to shared memory (cp.async) while this row reduces and is
  // written, so that the SM keeps reading through the reductions' barriers.
  // A thread reads back only its own slots, and refills them after the
  // mean's barrier (its reads are complete there), so no other barrier
  // guards them.
  static_assert(!kStaged || (kCache > 0 && kKeepDeviations && kSplit == 1), "staged rows");
  __shared__ __align__(16) P staged[kStaged ? kCache : 1][kStaged ? kMaxCachedRowThreads : 1];
  const auto stage = [&](int64_t row) {
    const auto* x_row = reinterpret_cast<const P*>(a.x + row * a.x_stride);
    ForThreadPacks<kCache>(packs, [&](int slot, int64_t p) {
      __pipeline_memcpy_async(&staged[slot][threadIdx.x], x_row + p, sizeof(P));
    });
    __pipeline_commit();
  };
  if constexpr (kStaged) {
    if (blockIdx.x < a.rows) stage(blockIdx.x);
  }
  ForBlockRows(a.rows, [&](int64_t row, bool active) {
    const auto* x = reinterpret_cast<const P*>(a.x + row * a.x_stride);
    auto* out = reinterpret_cast<PO*>(a.out + row * a.out_stride);
    RegisterPacks<P, (kCache > 0 ? kCache : 1), kDecode> cache;
    if constexpr (kStaged) __pipeline_wait_prior(0);
    C deviation[kKeepDeviations ? kCache : 1][kLanes];  // x, then x - mean (kKeepDeviations)
    if constexpr (kDecode) {  // all loads first, as in RMSNormKernel; else with the sum below
      const int64_t load_row = active ? row : a.rows - 1;
      const auto* x_row = reinterpret_cast<const P*>(a.x + load_row * a.x_stride);
      ForSlots<kCache, kDecode>(packs, [&](int slot, int64_t p, bool) { cache.Load(slot, x_row + p); });
      weight.Load(packs);
      bias.Load(packs);
    }
    const auto row_pack = [&](int slot, int64_t p) {
      if constexpr (kCache > 0) {
        return cache[slot];
      } else {
        return x[p];
      }
    };
    // Both reductions' passes over every slot in decode calls, masked, as
    // RMSNormKernel's first pass (+ 0 leaves a sum's bits: it is never -0).
    C sum[kSplit] = {};
    if (kDecode || active) {
      ForSlots<kCache, kDecode>(packs, [&](int slot, int64_t p, bool in_row) {
        in_row = in_row && active;
        const P v = kDecode ? cache[slot] : kStaged ? staged[slot][threadIdx.x] : x[p];
        if constexpr (kKeepDeviations) {
#pragma unroll
          for (int i = 0; i < kLanes; ++i) {
            deviation[slot][i] = LoadLane(v, i);
            sum[slot % kSplit] += in_row ? deviation[slot][i] : C(0);
          }
        } else {
#pragma unroll
          for (int i = 0; i < kLanes; ++i) sum[slot % kSplit] += in_row ? LoadLane(v, i) : C(0);
          if constexpr (!kDecode && kCache > 0) cache.Set(slot, v);
        }
      });
    }
    const C mean = a.PerElement(RowSum<kDecode>(sum, partials[0]));
    // After RowSum's barrier, which every thread passes once its reads of
    // the slots are complete.
    if constexpr (kStaged) {
      const int64_t next = row + gridDim.x;
      if (next < a.rows) stage(next);
    }
    C sum_sq_dev[kSplit] = {};
    if (kDecode || active) {
      ForSlots<kCache, kDecode>(packs, [&](int slot, int64_t p, bool in_row) {
        in_row = in_row && active;
        if constexpr (kKeepDeviations) {
#pragma unroll
          for (int i = 0; i < kLanes; ++i) {
            deviation[slot][i] -= mean;
            const C dev = in_row ? deviation[slot][i] : C(0);
            sum_sq_dev[slot % kSplit] = fma(dev, dev, sum_sq_dev[slot % kSplit]);
          }
        } else {
          const P v = row_pack(slot, p);
#pragma unroll
          for (int i = 0; i < kLanes; ++i) {
            const C dev = in_row ? LoadLane(v, i) - mean : C(0);
            sum_sq_dev[slot % kSplit] = fma(dev, dev, sum_sq_dev[slot % kSplit]);
          }
        }
      });
    }
    const C rstd = C(1) / sqrt(a.PerElement(RowSum<kDecode>(sum_sq_dev, partials[1])) + a.eps);
    if (!active) return;
    const QuantScale<C> out_scale = quant_scale.ForRow();
    // float16's split kernels test it a value: once a row, the whole-SM
    // rows' kernel spilled 32 bytes (bfloat16's none) and ran 7 % slower at
    // 2048 x 32768, and the x 4096 one 0.7 % slower at 16384 x 4096
    // (benchmarks/results/h100-2026-12-07-stop66, run 2).
    constexpr bool kDivisionOnceARow =
        Rows<T, W, O>::kQuant && !(std::is_same_v<T, __half> && kSplit > 1);
    OutputPass<kDivisionOnceARow>(out_scale, [&](auto division) {
      ForThreadPacks<kCache>(packs, [&](int slot, int64_t p) {
        const P v = row_pack(slot, p);
        const PW w = weight.Get(slot, p);
        PW b;
        if (a.bias) b = bias.Get(slot, p);
        C y[kLanes];
#pragma unroll
        for (int i = 0; i < kLanes; ++i) {
          const C dev = kKeepDeviations ? deviation[kKeepDeviations ? slot : 0][i]
                                        : LoadLane(v, i) - mean;
          // Every a * b + c here and in the sums of squares is an explicit
          // fma, as the CPU's MulAdd: left to the compiler's contraction, the
          // bias's add was fused in one instantiation and not in another
          // (fp8 rows of float32 x 4096 and x 8192 differed between one block
          // an SM and several, test_cuda_row_bits_independent_of_row_count).
          const C normed = dev * rstd;
          y[i] = a.bias ? fma(normed, LoadLane(w, i), LoadLane(b, i)) : normed * LoadLane(w, i);
        }
        out[p] = StoreOutputs<O, decltype(division)::value>(y, out_scale);
      });
    });
  });
}

template <class T, class W, class O>
Rows<T, W, O> RowsOf(const NormArgs& args) {
  using C = typename CudaTypes<T>::Compute;
  const bool power_of_two = (args.hidden & (args.hidden - 1)) == 0;
  return Rows<T, W, O>{static_cast<const T*>(args.x),
                       static_cast<T*>(args.residual),
                       static_cast<const W*>(args.weight),
                       static_cast<const W*>(args.bias),
                       static_cast<O*>(args.out),
                       args.scale,
                       args.rows,
                       args.hidden,
                       power_of_two ? static_cast<C>(1.0 / static_cast<double>(args.hidden)) : C(0),
                       static_cast<C>(args.eps),
                       args.x_stride,
                       args.residual_stride,
                       args.out_stride};
}

// Calls fn(TypeTag<O>{}) with O the output type: uint8_t (float8_e4m3fn
// bits) for the quant ops, else T.
template <class T, class Fn>
void VisitOutputType(const NormArgs& args, Fn&& fn) {
  if (args.scale != nullptr) return fn(TypeTag<uint8_t>{});
  fn(TypeTag<T>{});
}

// Calls fn(TypeTag<T>{}, TypeTag<W>{}) with T the CUDA storage type of
// args.dtype and W that of args.param_dtype: T itself, or float for 16-bit T
// (only the pairs the entry accepts are instantiated).
template <class Fn>
void VisitNormTypes(const NormArgs& args, Fn&& fn) {
  VisitCudaType(args.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) == 2) {
      if (args.param_dtype == DType::kFloat32) return fn(tag, TypeTag<float>{});
    }
    fn(tag, tag);
  });
}

// How a kernel spreads a row over threads: at least packs_per_thread packs
// a thread, up to max_threads threads (more only where kMaxCache would
// otherwise be exceeded). It depends on the row length alone, never on the
// number of rows, so a row's result has the same bits whatever the batch.
// Measured on an H100 (bfloat16 rows of 2048-8192, 1-128 of them, under CUDA
// graph replay; docs/performance.md): at decode sizes a kernel is latency-
// bound and the per-thread chain (loads, conversions, the thread's partial
// sum) costs more than a wider cross-warp exchange, so the RMS norms take
// one pack a thread up to 512 threads (fused_add_rmsnorm 1x4096: 1.95 us
// against 2.19 with 4 packs), but 2 from 512 packs on: bfloat16 x 4096, 1-128
// rows, Liger's time over rmsnorm's went from 0.97-0.99 on 512 threads of one
// (benchmarks/results/h100-2026-11-23-final3/) to 1.00-1.02 on 256 of two
// (h100-2026-11-24/, run 6), gemma_rmsnorm from 0.97-1.00 to 1.01-1.03. The
// quant ops take the same shapes: decode calls run unbounded (RowGrid), so
// the fp8 epilogue's registers no longer cost them, and large calls keep
// twice the bytes in flight (bfloat16 rmsnorm_quant 16384x4096: 118 -> 78 us,
// FlashInfer 87; layernorm_quant 146 -> 124; docs/performance.md, "Quant
// norms on 2 packs a thread"). layernorm takes 2 packs a
// thread: in one H100 run of three builds (benchmarks/results/h100-2026-11-23-lnshape/) 2 packs
// against 4 took 1.92-2.20 us against 2.08-2.25 at x 2048, the same or less
// at x 4096 and x 8192, and 26.9 against 27.2 us at 4096x4096; 1 pack was
// fastest at x 2048 (1.89-2.15) but took 40.1 us at 4096x4096. Its rows
// of up to 1024 16-bit values run on one warp, 4 packs a thread, without a
// barrier (H100, bfloat16, graph replay: 2048x1024 4.38 -> 3.47 us, Liger
// 3.70; 16384x1024 24.5 -> 24.7, Liger 25.6); decode rows pay for the longer
// thread chain (1x1024 1.95, Liger 1.62), which is why the RMS norms, decoder
// models' norms, keep 2+ warps there (on one warp: rmsnorm 1x1024 1.50 ->
// 1.68, fused_add_rmsnorm 1.59 -> 2.02; benchmarks/results/h100-2026-11-25-lnshape2).
struct RowShape {
  int packs_per_thread;
  int max_threads;
  int64_t two_packs_from = INT64_MAX;  // rows of this many packs or more take 2 a thread
  // Rows of at most kMaxCache * 32 packs (1024 16-bit values, 512 float32)
  // on one warp: its reductions are shuffles alone, no barrier.
  bool one_warp_short_rows = false;
  // Rows too long for kMaxCachedRowThreads threads of kMaxCache packs kept
  // in registers too, on up to kMaxRowThreads threads (RowGrid::kWholeSm).
  bool whole_sm_rows = false;
  // Row tiles a block takes in large cached calls of the quant ops without a
  // residual (LaunchRows says why).
  int quant_tiles_per_block = 4;
};
// The fused kernels hold x's and residual's packs until their sum: at the
// 64 registers of a 1024-thread block, ptxas spills none for float32 x and
// parameters (fused_add_rmsnorm, its Gemma form and fused_add_rmsnorm_quant),
// but 32 bytes for bfloat16 (and 40 for float64 quant), so only float32's
// rows take whole SMs; the others stream, reading the sum back from L2.
// H200, float32, graph replay, 4 input sets, µs, streamed -> whole SM
// (Liger): fused_add_rmsnorm 16384x16384 1048.6 -> 1015.1 (1024.8),
// 8192x16384 527.9 -> 515.5 (516.0), 4096x16384 265.0 -> 266.0 (259.4);
// gemma_fused_add_rmsnorm alike; fused_add_rmsnorm_quant 4096x16384 275.2
// -> 232.0 (0.75 -> 0.89 of a copy), 16384x16384 985.2 -> 874.8; 32x16384,
// one row an SM, 4.70 -> 4.90 (4.79-4.85) (benchmarks/results/
// h200-2026-12-01-stop52, run 2).
template <bool kFusedAdd, class T, class W>
constexpr bool kRMSNormWholeSmRows =
    !kFusedAdd || (std::is_same_v<T, float> && std::is_same_v<W, float>);
// 2 packs a thread from the row that would fill a kMaxCachedRowThreads
// block at one pack (512 packs: 4096 16-bit values).
template <bool kFusedAdd, class T, class W>
constexpr RowShape kRMSNormShape{1, kMaxCachedRowThreads, kMaxCachedRowThreads, false,
                                 kRMSNormWholeSmRows<kFusedAdd, T, W>};
constexpr RowShape kLayerNormShape{2, kMaxCachedRowThreads, INT64_MAX, true, true, 1};

constexpr int64_t WarpsOf(int64_t threads) { return (threads + 31) / 32 * 32; }
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Picks the pack width, the register cache depth and the launch shape for
// the rows of `args` (parameters of type W), then calls
// launch(Int<kLanes>, Int<kCache>, grid, block).
template <class T, class W, class Launch>
void LaunchRows(const NormArgs& args, const DeviceScope& scope, const RowShape& shape,
                Launch&& launch) {
  constexpr int kVectorLanes = 16 / sizeof(T);
  // Every row start aligned: hidden and the row strides multiples of a pack,
  // and the parameters aligned to theirs (32 bytes for float32 with 16-bit x).
  bool aligned = args.hidden % kVectorLanes == 0 && args.x_stride % kVectorLanes == 0 &&
                 args.residual_stride % kVectorLanes == 0 && args.out_stride % kVectorLanes == 0;
  for (const void* p : {args.x, static_cast<const void*>(args.residual)}) {
    aligned = aligned && reinterpret_cast<uintptr_t>(p) % 16 == 0;  // null passes
  }
  // A pack of fp8 output (the quant ops) is kVectorLanes bytes.
  const size_t out_size = args.scale != nullptr ? 1 : sizeof(T);
  aligned = aligned && reinterpret_cast<uintptr_t>(args.out) % (kVectorLanes * out_size) == 0;
  for (const void* p : {args.weight, args.bias}) {
    aligned = aligned && reinterpret_cast<uintptr_t>(p) % (kVectorLanes * sizeof(W)) == 0;
  }
  const int64_t packs = aligned ? args.hidden / kVectorLanes : args.hidden;
  // The shape's packs per thread (a warp at least, at most its thread
  // count); rows that would then need more than kMaxCache packs a thread take
  // more threads; the cache depth is the smallest power of two that holds the
  // row. Rows longer than kMaxCache packs per thread of a
  // kMaxCachedRowThreads block, and misaligned rows, stream instead (cache 0,
  // up to kMaxRowThreads threads of about kMaxCache packs), but for the
  // kWholeSm rows of shapes that allow them (up to kMaxRowThreads threads of
  // kMaxCache packs, cached).
  const int64_t streaming_threads =
      std::min<int64_t>(WarpsOf(CeilDiv(packs, kMaxCache)), kMaxRowThreads);
  const int per_thread = packs >= shape.two_packs_from ? std::max(2, shape.packs_per_thread)
                                                       : shape.packs_per_thread;
  int64_t threads = std::clamp<int64_t>(WarpsOf(CeilDiv(packs, per_thread)), 32, shape.max_threads);
  if (shape.one_warp_short_rows && packs <= kMaxCache * 32) threads = 32;
  if (!aligned || packs > kMaxCache * threads) threads = streaming_threads;
  int cache = 1;
  while (cache < kMaxCache && packs > cache * threads) cache *= 2;
  if (!aligned || packs > cache * threads ||
      (threads > kMaxCachedRowThreads && (cache < kMaxCache || !shape.whole_sm_rows))) {
    cache = 0;
  }
  const int row_threads = static_cast<int>(threads);
  const int rows_per_block = std::max(1, kMinBlockThreads / row_threads);
  const dim3 block(row_threads, rows_per_block);
  const int64_t tiles = (args.rows + rows_per_block - 1) / rows_per_block;
  // One block a row tile (RowGrid); ForBlockRows loops past grid.x's limit.
  // Large calls of rmsnorm_quant take 4 tiles a block (shape.
  // quant_tiles_per_block): a block builds the scale's reciprocal once
  // (RowQuantScale), for 4 rows instead of 1. H100, bfloat16, graph replay,
  // 16384x4096, µs: rmsnorm_quant 76.5-76.8 -> 72.5-72.6 (0.90 -> 0.94 of a
  // copy); fused_add_rmsnorm_quant got slower (160.0-160.5 -> 164.7), and so
  // did rmsnorm and layernorm at 2 tiles a block (92.6-92.9 -> 93.6-93.9,
  // 91.4 -> 93.3; benchmarks/results/h100-2026-11-27-stop35, run 1).
  // layernorm_quant had gained too (89.8-90.4 -> 87.5-87.6), but loses with
  // it since its kernels changed (split and staged rows): 4 tiles -> 1, bfloat16,
  // 16384 rows x 2048 39.7 -> 38.6, x 4096 72.6 -> 71.7 (0.94 -> 0.95 of a
  // copy), x 8192 142.4 -> 139.2, x 16384 279.8 -> 267.6 (0.95 -> 0.99)
  // (benchmarks/results/h100-2026-12-07-stop68, run 1).
  const bool quant_without_residual = args.scale != nullptr && args.residual == nullptr;
  const int64_t tiles_per_block = quant_without_residual && cache > 0 &&
                                          tiles > 64 * int64_t{scope.Multiprocessors()}
                                      ? shape.quant_tiles_per_block
                                      : 1;
  const dim3 grid(
      static_cast<unsigned>(std::min<int64_t>(CeilDiv(tiles, tiles_per_block), INT32_MAX)));
  if (!aligned) return launch(Int<1>{}, Int<0>{}, grid, block);
  switch (cache) {
    case 1: return launch(Int<kVectorLanes>{}, Int<1>{}, grid, block);
    case 2: return launch(Int<kVectorLanes>{}, Int<2>{}, grid, block);
    case 4: return launch(Int<kVectorLanes>{}, Int<4>{}, grid, block);
    default: return launch(Int<kVectorLanes>{}, Int<0>{}, grid, block);
  }
}
static_assert(kMaxCache == 4, "LaunchRows' switch lists the cache depths");

template <bool kFusedAdd>
void LaunchRMSNorm(const NormArgs& args) {
  DeviceScope scope(args.device);
  VisitNormTypes(args, [&](auto t_tag, auto w_tag) {
    using T = typename decltype(t_tag)::type;
    using W = typename decltype(w_tag)::type;
    const auto launch = [&](auto lanes, auto cache, dim3 grid, dim3 block) {
      constexpr int kLanes = decltype(lanes)::value, kCache = decltype(cache)::value;
      WithRowGrid<kCache, kRMSNormWholeSmRows<kFusedAdd, T, W>>(scope, grid, block, [&](auto row_grid) {
        constexpr RowGrid kGrid = decltype(row_grid)::value;
        // The kernel of output type O with its rows split kSplit ways
        // (kSplitWholeSmRows: the quant ops, and 16-bit x).
        const auto launch_kernel = [&](auto o_tag, auto split) {
          using O = typename decltype(o_tag)::type;
          constexpr int kSplit = decltype(split)::value;
          constexpr RowGrid kRowGrid = kSplit > 1 ? RowGrid::kSeveralBlocksPerSm : kGrid;
          constexpr int kRowCache = kSplit * kCache;
          const dim3 row_block(block.x / kSplit, block.y);
          if constexpr (std::is_same_v<O, uint8_t>) {  // the quant ops: never in Gemma's style
            LaunchDependent(scope, RMSNormKernel<T, W, kLanes, kRowCache, kFusedAdd, false, O, kRowGrid, kSplit>,
                            grid, row_block, RowsOf<T, W, O>(args));
          } else {
            const auto kernel =
                args.gemma ? RMSNormKernel<T, W, kLanes, kRowCache, kFusedAdd, true, O, kRowGrid, kSplit>
                           : RMSNormKernel<T, W, kLanes, kRowCache, kFusedAdd, false, O, kRowGrid, kSplit>;
            LaunchDependent(scope, kernel, grid, row_block, RowsOf<T, W, O>(args));
          }
        };
        const auto launch_output = [&](auto o_tag) {
          using O = typename decltype(o_tag)::type;
          if constexpr (!kFusedAdd && kSplitWholeSmRows<T, W, kCache, kGrid> &&
                        (std::is_same_v<O, uint8_t> || sizeof(T) == 2)) {
            if (SplitsWholeSmRows(scope, grid, block)) return launch_kernel(o_tag, Int<2>{});
          }
          launch_kernel(o_tag, Int<1>{});
        };
        if (args.scale != nullptr) return launch_output(TypeTag<uint8_t>{});
        launch_output(TypeTag<T>{});
      });
    };
    LaunchRows<T, W>(args, scope, kRMSNormShape<kFusedAdd, T, W>, launch);
  });
  CheckLaunch();
}

}  // namespace

void RMSNorm(const NormArgs& args) { LaunchRMSNorm<false>(args); }

void FusedAddRMSNorm(const NormArgs& args) { LaunchRMSNorm<true>(args); }

// Whether large calls of layernorm (and layernorm_quant) split their rows
// (LayerNormKernel's kSplit = 2: half the threads, each with the packs and
// partials of two): rows LaunchRows gives 2 cached packs a thread on 128-512
// threads (up to 8192 16-bit values, 4096 float32) take 4 on half the
// threads (256 at 8192 / 4096, as Liger), and a row's per-thread work (the reductions'
// shuffles and barriers, the mean's and rstd's broadcasts) is spread over
// twice the values, so fewer instructions a value; the 4 packs fit 64
// registers without spills (ptxas: 56 for float32), 4 rows in flight an SM
// against 3 unsplit. Parameters of x's type (float32 parameters bound a
// block to an SM's registers; not measured split). H200, graph replay, 4
// input sets, µs, unsplit -> split: float32 1024x4096 12.3 -> 11.8 (Liger
// 10.3), 4096x4096 38.2 -> 35.7 (34.5), 16384x4096 141.4 -> 131.1 (131.3),
// 1024x2048 7.6 -> 6.5 (6.3); bfloat16 16384x4096 74.3 -> 67.5 (72.0),
// 4096x4096 21.3 -> 20.1 (20.5), 4096x8192 42.2 -> 38.0 (47.5); 256x4096
// float32 level (benchmarks/results/h200-2026-11-29-stop49, run 1).
// layernorm_quant, fp8, split first (issue-bound): H100, 16384x4096:
// bfloat16 76.7 -> 73.2-73.6 us (0.89 -> 0.94 of a copy), float32 122.2 ->
// 115.6-116.9 (0.93 -> 0.97-0.98) (benchmarks/results/h100-2026-11-27-stop38,
// run 1).
template <class T, class W, class O, int kCache, RowGrid kGrid>
constexpr bool kSplitRows = std::is_same_v<T, W> && kCache == 2 &&
                            kGrid == RowGrid::kSeveralBlocksPerSm;
// Staged rows (LayerNormKernel's kStaged) for large calls of layernorm_quant
// whose rows take at most 3 of a thread's 4 slots (512 threads; 16-bit x
// 8193-12288, float32 4097-6144): one block a row, two an SM, each waiting
// on its row's loads and on two block-wide reductions a row, had left the
// memory idle part of the time, the more so the fewer values a thread holds.
// H100, bfloat16, graph replay, µs, one block a row -> staged:
// 8192x12288 126.8-126.9 -> 114.3-114.7 (0.81 -> 0.90 of a copy at the
// rate of the same runs' 4096x16384 copies). Rows that
// fill every slot are issue-bound, and staging them cost more than it saved
// at many rows: 16384x16384 286.8 -> 307.3-309.1, 8192x16384 147.9-148.0 ->
// 152.6-153.9, 4096x16384 76.7-76.9 -> 76.9-77.3, float32 4096x8192 61.2 ->
// 61.5 (1024x16384 gained, 23.6 -> 21.9-22.1); rows of 4 packs a thread
// keep one block a row (benchmarks/results/h100-2026-11-27-stop39, runs 2
// and 5).
template <class T, class W, class O, int kCache, RowGrid kGrid>
constexpr bool kStagedRows = std::is_same_v<O, uint8_t> && std::is_same_v<T, W> &&
                             !std::is_same_v<T, double> && kCache == 4 &&
                             kGrid == RowGrid::kSeveralBlocksPerSm;

void LayerNorm(const NormArgs& args) {
  DeviceScope scope(args.device);
  VisitNormTypes(args, [&](auto t_tag, auto w_tag) {
    using T = typename decltype(t_tag)::type;
    using W = typename decltype(w_tag)::type;
    VisitOutputType<T>(args, [&](auto o_tag) {
      using O = typename decltype(o_tag)::type;
      const auto launch = [&](auto lanes, auto cache, dim3 grid, dim3 block) {
        constexpr int kLanes = decltype(lanes)::value, kCache = decltype(cache)::value;
        WithRowGrid<kCache, kLayerNormShape.whole_sm_rows>(scope, grid, block, [&](auto row_grid) {
          constexpr RowGrid kGrid = decltype(row_grid)::value;
          if constexpr (kStagedRows<T, W, O, kCache, kGrid>) {
            if (block.y == 1 && args.hidden / kLanes <= int64_t{kCache - 1} * block.x) {
              constexpr int kBlocksPerSm = GridBlocksPerSm<kCache, T, W, kGrid, RowRegisters::kOneRow>();
              const dim3 resident(static_cast<unsigned>(
                  std::min<int64_t>(args.rows, int64_t{kBlocksPerSm} * scope.Multiprocessors())));
              return LaunchDependent(scope, LayerNormKernel<T, W, kLanes, kCache, O, kGrid, 1, true>,
                                     resident, block, RowsOf<T, W, O>(args));
            }
          }
          if constexpr (kSplitWholeSmRows<T, W, kCache, kGrid>) {
            if (SplitsWholeSmRows(scope, grid, block)) {
              return LaunchDependent(
                  scope, LayerNormKernel<T, W, kLanes, 2 * kCache, O, RowGrid::kSeveralBlocksPerSm, 2>,
                  grid, dim3(block.x / 2), RowsOf<T, W, O>(args));
            }
          }
          if constexpr (kSplitRows<T, W, O, kCache, kGrid>) {
            if (block.y == 1 && block.x % 64 == 0) {
              return LaunchDependent(scope, LayerNormKernel<T, W, kLanes, 2 * kCache, O, kGrid, 2>,
                                     grid, dim3(block.x / 2), RowsOf<T, W, O>(args));
            }
          }
          LaunchDependent(scope, LayerNormKernel<T, W, kLanes, kCache, O, kGrid>, grid, block,
                          RowsOf<T, W, O>(args));
        });
      };
      LaunchRows<T, W>(args, scope, kLayerNormShape, launch);
    });
  });
  CheckLaunch();
}

}  // namespace cuda
}  // namespace hetkern
