// CUDA kernel of rope: a block per token, or where there are more tokens
// than the GPU holds blocks, as many blocks as it holds, each taking tokens
// in turn; the block's threads spread over (head, chunk of pairs) items of
// all query and key heads. Each thread rotates kPairs pairs with 16-byte
// loads where the layout is aligned.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "src/core/kernels.h"
#include "src/cuda/common.cuh"
#include "src/cuda/elementwise.cuh"  // Pack

namespace hetkern {
namespace cuda {
namespace {

// N consecutive elements at p: one vector access when kVector (p aligned to
// the Pack), else element by element.
template <int N, bool kVector, class T>
__device__ __forceinline__ Pack<T, N> LoadLanes(const T* p) {
  if constexpr (kVector) {
    return *reinterpret_cast<const Pack<T, N>*>(p);
  } else {
    Pack<T, N> v;
#pragma unroll
    for (int k = 0; k < N; ++k) v.lane[k] = p[k];
    return v;
  }
}

template <int N, bool kVector, class T>
__device__ __forceinline__ void StoreLanes(const Pack<T, N>& v, T* p) {
  if constexpr (kVector) {
    *reinterpret_cast<Pack<T, N>*>(p) = v;
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) p[k] = v.lane[k];
  }
}

template <class T, class TC, class TPos, bool kNeox, int kPairs, bool kVector>
__global__ void __launch_bounds__(512) RopeKernel(RopeArgs a) {
  using Types = CudaTypes<T>;
  using C = typename Types::Compute;
  const auto* positions = static_cast<const TPos*>(a.positions);
  const auto* cache = static_cast<const TC*>(a.cos_sin_cache);
  T* query = static_cast<T*>(a.query);
  T* key = static_cast<T*>(a.key);
  const int half = static_cast<int>(a.rot_dim / 2);
  const int head_size = static_cast<int>(a.head_size);
  const int num_heads = static_cast<int>(a.num_heads);
  const int chunks = half / kPairs;  // kPairs divides half (checked by the launcher)
  const int items = static_cast<int>(a.num_heads + a.num_kv_heads) * chunks;
  WaitForPriorGrids();
  AllowDependentGrids();
  // Each thread takes its items (usually one: items <= blockDim.x at LLM
  // shapes) over the block's tokens, the next token's values and position
  // loaded before this token's cos/sin wait and stores (rows of query and
  // key are disjoint: the entry checks the written arrays), so that one
  // token's loads overlap the previous one's latency.
  // x/y: the two halves (NeoX) or the interleaved pairs (GPT-J: x alone).
  using XPack = Pack<T, kNeox ? kPairs : 2 * kPairs>;
  for (int item = threadIdx.x; item < items; item += blockDim.x) {
    const int head = item / chunks;
    const int pair = (item - head * chunks) * kPairs;
    const bool is_query = head < num_heads;
    T* const base = is_query ? query + head * head_size : key + (head - num_heads) * head_size;
    const int64_t stride = is_query ? a.query_stride : a.key_stride;
    const int x_offset = kNeox ? pair : 2 * pair;
    XPack x_pack, y_pack;
    const auto load = [&](int64_t token, XPack& xv, XPack& yv) {
      const T* p = base + token * stride;
      if constexpr (kNeox) {
        xv = LoadLanes<kPairs, kVector>(p + x_offset);
        yv = LoadLanes<kPairs, kVector>(p + half + x_offset);
      } else {
        xv = LoadLanes<2 * kPairs, kVector>(p + x_offset);
      }
    };
    int64_t token = blockIdx.x;
    if (token >= a.num_tokens) break;
    // The head's values first: their loads do not wait for the position, so
    // their latency overlaps the position -> cos/sin chain.
    load(token, x_pack, y_pack);
    int64_t pos = static_cast<int64_t>(positions[token]);
    for (; token < a.num_tokens; token += gridDim.x) {
      const int64_t next = token + gridDim.x;
      XPack x_next, y_next;
      int64_t next_pos = 0;
      if (next < a.num_tokens) {
        load(next, x_next, y_next);
        next_pos = static_cast<int64_t>(positions[next]);
      }
      // Out-of-range positions cannot be reported without a host sync: such
      // tokens are skipped (left unchanged), never read out of bounds.
      if (pos >= 0 && pos < a.max_position) {
        const TC* cos_row = cache + pos * a.rot_dim;
        const TC* sin_row = cos_row + half;
        const Pack<TC, kPairs> c = LoadLanes<kPairs, kVector>(cos_row + pair);
        const Pack<TC, kPairs> s = LoadLanes<kPairs, kVector>(sin_row + pair);
        // Pair k is (x_ref, y_ref), rotated in place in the packs; each
        // product rounded (MulRn), as torch's x * cos - y * sin does.
        const auto rotate = [&](int k, T& x_ref, T& y_ref) {
          const C x = Types::Load(x_ref), y = Types::Load(y_ref);
          const C cos_k = static_cast<C>(LoadLane(c, k));
          const C sin_k = static_cast<C>(LoadLane(s, k));
          x_ref = Types::Store(SubRn(MulRn(x, cos_k), MulRn(y, sin_k)));
          y_ref = Types::Store(AddRn(MulRn(y, cos_k), MulRn(x, sin_k)));
        };
#pragma unroll
        for (int k = 0; k < kPairs; ++k) {
          if constexpr (kNeox) {
            rotate(k, x_pack.lane[k], y_pack.lane[k]);
          } else {
            rotate(k, x_pack.lane[2 * k], x_pack.lane[2 * k + 1]);
          }
        }
        T* p = base + token * stride;
        if constexpr (kNeox) {
          StoreLanes<kPairs, kVector>(x_pack, p + x_offset);
          StoreLanes<kPairs, kVector>(y_pack, p + half + x_offset);
        } else {
          StoreLanes<2 * kPairs, kVector>(x_pack, p + x_offset);
        }
      }
      x_pack = x_next;
      y_pack = y_next;
      pos = next_pos;
    }
  }
}

bool AlignedTo(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// Blocks of `threads` threads (a multiple of 32, at most 512) of kKernel
// that one SM holds at once, cached per kernel and block size: the occupancy
// query is a runtime call, and decode calls count their host time. The
// first GPU to ask answers for every GPU of the process; it only sizes the
// grid.
template <void (*kKernel)(RopeArgs)>
int ResidentBlocksPerSm(int threads) {
  static std::atomic<int> cached[512 / 32] = {};  // blocks + 1; 0: not asked yet
  std::atomic<int>& entry = cached[threads / 32 - 1];
  int known = entry.load(std::memory_order_relaxed);
  if (known == 0) {
    int blocks = 0;
    HETKERN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kKernel, threads, 0));
    known = blocks + 1;
    entry.store(known, std::memory_order_relaxed);
  }
  return known - 1;
}

template <class T, class TC, class TPos, bool kNeox>
void LaunchRope(const RopeArgs& a, const DeviceScope& scope) {
  // Pairs per thread for 16-byte accesses to query/key: NeoX reads kPairs
  // elements from each half, GPT-J 2 * kPairs interleaved ones.
  constexpr int kPairs = kNeox ? 16 / sizeof(T) : std::max<int>(1, 8 / sizeof(T));
  constexpr int kHeadLanes = kNeox ? kPairs : 2 * kPairs;
  const int64_t half = a.rot_dim / 2;
  const bool vector = half % kPairs == 0 && a.head_size % kHeadLanes == 0 &&
                      a.query_stride % kHeadLanes == 0 && a.key_stride % kHeadLanes == 0 &&
                      AlignedTo(a.query, kHeadLanes * sizeof(T)) &&
                      (a.key == nullptr || AlignedTo(a.key, kHeadLanes * sizeof(T))) &&
                      AlignedTo(a.cos_sin_cache, kPairs * sizeof(TC));
  const int64_t pairs_per_thread = vector ? kPairs : 1;
  const int64_t items = (a.num_heads + a.num_kv_heads) * half / pairs_per_thread;
  // Items beyond 512 are spread evenly: every thread takes the same number
  // (ceil(items / 512)), instead of 512 threads taking one and a few a second
  // while the rest of the block idles (float32, 32 + 8 heads x 128: 640
  // items, 320 threads of two, against 512 threads of which 128 took two:
  // H100, graph replay, 4 input sets, 16384 tokens 249.5 -> 243.3 us, 4096
  // 64.3 -> 62.7; Liger 232.9 and 60.7).
  const int64_t passes = (items + 511) / 512;
  const int threads = static_cast<int>(std::max<int64_t>(32, ((items + passes - 1) / passes + 31) / 32 * 32));
  // One token a block at a time; more tokens than the GPU holds blocks at
  // once are shared out among that many (RopeKernel pipelines a block's
  // tokens). H100, bfloat16, 32 + 8 heads x 128, graph replay, against the
  // former kernel on a grid of up to 16 blocks an SM, one token at a time
  // (Liger in the same pass): 4096 tokens 29.4-29.5 us -> 27.7 (27.9-28.1),
  // 1024 5.16-5.21 -> 5.06-5.10 (4.5-4.6), 8192 60.0-60.3 -> 61.0-61.3
  // (60.9-61.3), 16384 and decode calls level. Pipelined on the 16-an-SM
  // grid (run 5, against this grid): 1024 tokens 5.23-5.26 against
  // 5.06-5.07, 4096 28.8-29.0 / 28.2-28.4, 8192 59.8-60.2 / 61.3-61.7,
  // 16384 118.8-119.7 / 119.9-120.2. Liger's times are those of
  // benchmarks/graph_probe.py; the peers tables time it 6-20 % faster
  // (benchmarks/results/h100-2026-11-27-stop39, runs 1-5).
  constexpr auto kVectorKernel = RopeKernel<T, TC, TPos, kNeox, kPairs, true>;
  constexpr auto kLaneKernel = RopeKernel<T, TC, TPos, kNeox, 1, false>;
  const int per_sm = vector ? ResidentBlocksPerSm<kVectorKernel>(threads)
                            : ResidentBlocksPerSm<kLaneKernel>(threads);
  const int64_t resident = int64_t{per_sm} * scope.Multiprocessors();
  const int blocks = static_cast<int>(std::clamp<int64_t>(a.num_tokens, 1, std::max<int64_t>(1, resident)));
  LaunchDependent(scope, vector ? kVectorKernel : kLaneKernel, blocks, threads, a);
  CheckLaunch();
}

}  // namespace

void Rope(const RopeArgs& args) {
  DeviceScope scope(args.device);
  VisitCudaType(args.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto with_cache = [&](auto cache_tag) {
      using TC = typename decltype(cache_tag)::type;
      const auto with_positions = [&](auto pos_tag) {
        using TPos = typename decltype(pos_tag)::type;
        if (args.is_neox) {
          LaunchRope<T, TC, TPos, true>(args, scope);
        } else {
          LaunchRope<T, TC, TPos, false>(args, scope);
        }
      };
      if (args.position_type == PositionType::kInt64) {
        with_positions(TypeTag<int64_t>{});
      } else {
        with_positions(TypeTag<int32_t>{});
      }
    };
    if (args.cache_dtype == args.dtype) {
      with_cache(TypeTag<T>{});
    } else {
      with_cache(TypeTag<float>{});
    }
  });
}

}  // namespace cuda
}  // namespace hetkern
