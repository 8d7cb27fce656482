// Highway kernel of rope, compiled once per SIMD target and dispatched at run
// time. Vectorised over the rot_dim / 2 rotation pairs of a head: the NeoX
// layout reads the two contiguous halves, the GPT-J layout de-interleaves
// (x, y) pairs with LoadInterleaved2. Each cos/sin vector is loaded once per
// token and applied to every query and key head.
#include <stddef.h>
#include <stdint.h>

#include "src/core/kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/rope.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "src/cpu/convert-inl.h"
#include "src/cpu/rope-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rotates pairs [pair, pair + Lanes(d)) of `heads` consecutive heads.
template <bool kNeox, class D, class T>
HWY_INLINE void RotateHeads(D d, T* HWY_RESTRICT first_head, int64_t heads, size_t head_size,
                            size_t half, size_t pair, hn::Vec<D> cos, hn::Vec<D> sin) {
  for (int64_t h = 0; h < heads; ++h) {
    T* head = first_head + h * head_size;
    hn::Vec<D> x, y;
    if constexpr (kNeox) {
      x = LoadAs(d, head + pair);
      y = LoadAs(d, head + half + pair);
    } else {
      LoadPairsAs(d, head + 2 * pair, x, y);
    }
    // Each product rounded on its own (no FMA; the build has
    // -ffp-contract=off), as torch's x * cos - y * sin in the compute type.
    const auto rotated_x = hn::Sub(hn::Mul(x, cos), hn::Mul(y, sin));
    const auto rotated_y = hn::Add(hn::Mul(y, cos), hn::Mul(x, sin));
    if constexpr (kNeox) {
      StoreAs(rotated_x, d, head + pair);
      StoreAs(rotated_y, d, head + half + pair);
    } else {
      StorePairsAs(rotated_x, rotated_y, d, head + 2 * pair);
    }
  }
}

// Tokens [begin, end); every position is in range (checked by the entry).
template <bool kNeox, class T, class TC, class TPos>
HWY_INLINE void RopeTokens(const RopeArgs& a, int64_t begin, int64_t end) {
  using C = ComputeType<T>;
  const hn::ScalableTag<C> d;
  const hn::CappedTag<C, 4> d4;  // e.g. the 8 pairs left of head_size 80 on AVX-512
  const hn::CappedTag<C, 1> d1;
  const size_t lanes = hn::Lanes(d), lanes4 = hn::Lanes(d4);
  const size_t head_size = static_cast<size_t>(a.head_size);
  const size_t half = static_cast<size_t>(a.rot_dim / 2);
  const auto* positions = static_cast<const TPos*>(a.positions);
  for (int64_t t = begin; t < end; ++t) {
    const TC* cos_row = static_cast<const TC*>(a.cos_sin_cache) + positions[t] * a.rot_dim;
    const TC* sin_row = cos_row + half;
    T* query = static_cast<T*>(a.query) + t * a.query_stride;
    T* key = a.key ? static_cast<T*>(a.key) + t * a.key_stride : nullptr;
    // One body for full vectors and, on the tail, up to 4 then single lanes
    // (capped tags, not LoadN/StoreN: Highway 1.3 has no partial form of
    // LoadInterleaved2/StoreInterleaved2 for the GPT-J pairs).
    const auto rotate = [&](auto dv, size_t pair) HWY_ATTR {
      const auto c = LoadCacheAs(dv, cos_row + pair);
      const auto s = LoadCacheAs(dv, sin_row + pair);
      RotateHeads<kNeox>(dv, query, a.num_heads, head_size, half, pair, c, s);
      if (key) RotateHeads<kNeox>(dv, key, a.num_kv_heads, head_size, half, pair, c, s);
    };
    size_t pair = 0;
    for (; pair + lanes <= half; pair += lanes) rotate(d, pair);
    for (; pair + lanes4 <= half; pair += lanes4) rotate(d4, pair);
    for (; pair < half; ++pair) rotate(d1, pair);
  }
}

void RopeKernel(const RopeArgs& args, int64_t token_begin, int64_t token_end) {
  VisitCpuType(args.dtype, [&](auto tag) HWY_ATTR {
    using T = typename decltype(tag)::type;
    // The cache is float32 or T: instantiate only those two.
    const auto with_cache = [&](auto cache_tag) HWY_ATTR {
      using TC = typename decltype(cache_tag)::type;
      const auto with_positions = [&](auto pos_tag) HWY_ATTR {
        using TPos = typename decltype(pos_tag)::type;
        if (args.is_neox) {
          RopeTokens<true, T, TC, TPos>(args, token_begin, token_end);
        } else {
          RopeTokens<false, T, TC, TPos>(args, token_begin, token_end);
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

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>

#include "src/cpu/parallel.h"

namespace hetkern {
namespace cpu {

// Rotated elements below which a thread is not worth waking.
constexpr int64_t kRopeMinChunkElements = 1 << 16;

HWY_EXPORT(RopeKernel);

void Rope(const RopeArgs& args) {
  // Tokens are independent (each element is written once from its own
  // inputs), so results do not depend on the thread count.
  const int64_t per_token = std::max<int64_t>(1, (args.num_heads + args.num_kv_heads) * args.rot_dim);
  const int64_t min_tokens = std::max<int64_t>(1, kRopeMinChunkElements / per_token);
  ParallelFor(args.num_tokens, min_tokens, 1, [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(RopeKernel)(args, begin, end);
  });
}

}  // namespace cpu
}  // namespace hetkern
#endif  // HWY_ONCE
