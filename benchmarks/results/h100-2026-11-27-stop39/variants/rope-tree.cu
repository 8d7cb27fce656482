// CUDA kernel of rope: one block per token (a grid-stride loop over tokens
// when there are more tokens than blocks), the block's threads spread over
// (head, chunk of pairs) items of all query and key heads. Each thread
// rotates kPairs pairs with 16-byte loads where the layout is aligned.
#include <algorithm>
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
  for (int64_t token = blockIdx.x; token < a.num_tokens; token += gridDim.x) {
    for (int item = threadIdx.x; item < items; item += blockDim.x) {
      const int head = item / chunks;
      const int pair = (item - head * chunks) * kPairs;
      T* head_ptr = head < num_heads ? query + token * a.query_stride + head * head_size
                                     : key + token * a.key_stride + (head - num_heads) * head_size;
      // The head's values first: their loads do not wait for the position,
      // so their latency overlaps the position -> cos/sin chain.
      // x/y: the two halves (NeoX) or the interleaved pairs (GPT-J).
      Pack<T, kNeox ? kPairs : 2 * kPairs> x_pack, y_pack;
      if constexpr (kNeox) {
        x_pack = LoadLanes<kPairs, kVector>(head_ptr + pair);
        y_pack = LoadLanes<kPairs, kVector>(head_ptr + half + pair);
      } else {
        x_pack = LoadLanes<2 * kPairs, kVector>(head_ptr + 2 * pair);
      }
      const int64_t pos = static_cast<int64_t>(positions[token]);
      // Out-of-range positions cannot be reported without a host sync: such
      // tokens are skipped (left unchanged), never read out of bounds.
      if (pos < 0 || pos >= a.max_position) continue;
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
      if constexpr (kNeox) {
        StoreLanes<kPairs, kVector>(x_pack, head_ptr + pair);
        StoreLanes<kPairs, kVector>(y_pack, head_ptr + half + pair);
      } else {
        StoreLanes<2 * kPairs, kVector>(x_pack, head_ptr + 2 * pair);
      }
    }
  }
}

bool AlignedTo(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

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
  const int threads = static_cast<int>(std::min<int64_t>(512, std::max<int64_t>(32, (items + 31) / 32 * 32)));
  // Work item of StreamingBlocks = one token per block.
  const int blocks = scope.StreamingBlocks(a.num_tokens, 1);
  if (vector) {
    LaunchDependent(scope, RopeKernel<T, TC, TPos, kNeox, kPairs, true>, blocks, threads, a);
  } else {
    LaunchDependent(scope, RopeKernel<T, TC, TPos, kNeox, 1, false>, blocks, threads, a);
  }
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
