// Highway kernels of the reductions (sum, max, dot, norm), compiled once per
// SIMD target. The order of every floating-point operation is fixed by
// src/cpu/reduce-tree.h: results are the same on every thread count and, as
// the order does not depend on the vector width either, on every target.
#include <stddef.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "src/core/kernels.h"
#include "src/cpu/reduce-tree.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/reduce.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "src/cpu/convert-inl.h"
#include "src/cpu/elementwise-inl.h"  // PrefetchAhead

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- The reductions: how elements enter a lane and how lanes combine ------
// Products and sums are separate roundings (no FMA): an FMA exists on some
// targets only, and the result must not depend on the target.

struct SumOp {
  static constexpr bool kBinary = false;
  static constexpr bool kWide = false;  // true: accumulates in float64 for every dtype
  static constexpr bool kHalfKeys = false;  // true: 16-bit lanes of the input's bits (HalfMaxOp)
  template <class D>
  static HWY_INLINE hn::Vec<D> Identity(D d) {
    return hn::Zero(d);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Accumulate(D, hn::Vec<D> acc, hn::Vec<D> x, hn::Vec<D>) {
    return hn::Add(acc, x);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Combine(D, hn::Vec<D> a, hn::Vec<D> b) {
    return hn::Add(a, b);
  }
  template <class A>
  static A Finish(A total) {
    return total;
  }
};

struct DotOp : SumOp {
  static constexpr bool kBinary = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Accumulate(D, hn::Vec<D> acc, hn::Vec<D> x, hn::Vec<D> y) {
    return hn::Add(acc, hn::Mul(x, y));
  }
};

// Squares are accumulated in float64 for every dtype (see AccumulatorOf):
// no float32 overflow or underflow of x*x, and float32 squares are exact,
// which makes the FMA give the same sum as a product and an add (one op
// fewer; float64 input keeps them separate).
template <bool kExactSquares>
struct NormOp : SumOp {
  static constexpr bool kWide = true;
  template <class D>
  static HWY_INLINE hn::Vec<D> Accumulate(D, hn::Vec<D> acc, hn::Vec<D> x, hn::Vec<D>) {
    if constexpr (kExactSquares) return hn::MulAdd(x, x, acc);
    return hn::Add(acc, hn::Mul(x, x));
  }
  template <class A>
  static A Finish(A total) {
    return std::sqrt(total);
  }
};

// IEEE 754-2019 maximum: NaN wins (like torch.max) and +0 > -0, so the
// result does not depend on the order. Lanes hold order keys rather than
// values: an unsigned integer maximum of keys is that maximum in 4 ops per
// vector (shift, xor, sub, max) instead of compare-and-select chains. The key
// flips negative values (all bits) and positive ones (the sign bit), which
// orders every number, -inf first, then moves the negative NaNs (below -inf
// after the flip) to the top by subtracting -inf's flipped bits, the
// mantissa mask: -inf -> 0, ..., -0 < +0, ..., +inf < every NaN. Which of
// several NaNs wins is fixed by its bits, so also independent of the order.
struct MaxOp {
  static constexpr bool kBinary = false;
  static constexpr bool kWide = false;
  static constexpr bool kHalfKeys = false;
  template <class D>
  static HWY_INLINE hn::Vec<D> Identity(D d) {
    return hn::Zero(d);  // the key of -inf
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Combine(D d, hn::Vec<D> a, hn::Vec<D> b) {
    const hn::RebindToUnsigned<D> du;
    return hn::BitCast(d, hn::Max(hn::BitCast(du, a), hn::BitCast(du, b)));
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Accumulate(D d, hn::Vec<D> acc, hn::Vec<D> x, hn::Vec<D>) {
    const hn::RebindToUnsigned<D> du;
    const hn::RebindToSigned<D> di;
    using U = hn::TFromD<decltype(du)>;
    constexpr int kSignShift = sizeof(U) * 8 - 1;
    const auto negative = hn::BitCast(du, hn::ShiftRight<kSignShift>(hn::BitCast(di, x)));
    const auto flipped =
        hn::Xor(hn::BitCast(du, x), hn::Or(negative, hn::Set(du, U{1} << kSignShift)));
    const auto key = hn::Sub(flipped, hn::Set(du, MantissaMask<U>()));
    return Combine(d, acc, hn::BitCast(d, key));
  }
  // The value of a key (the inverse of Accumulate's map).
  template <class A>
  static A Finish(A total) {
    using U = std::conditional_t<sizeof(A) == 4, uint32_t, uint64_t>;
    constexpr U kSign = U{1} << (sizeof(U) * 8 - 1);
    U key;
    hwy::CopySameSize(&total, &key);
    const U flipped = key + MantissaMask<U>();
    const U bits = (flipped & kSign) ? flipped ^ kSign : ~flipped;
    A value;
    hwy::CopySameSize(&bits, &value);
    return value;
  }
  template <class U>
  static constexpr U MantissaMask() {
    return sizeof(U) == 4 ? U{0x007FFFFF} : static_cast<U>(0x000FFFFFFFFFFFFFull);
  }
};

// MaxOp's keys for float16/bfloat16, made from the 16-bit patterns in
// 16-bit lanes: twice the lanes of float32 keys, and no widening (1 thread,
// Zen 4, bfloat16 max of 1M values: see docs/performance.md "Stop 41"). The
// key orders every value as MaxOp's does, so the maximum is the same value;
// a NaN maximum is returned quietened, as a float32 one narrowed is (which
// NaN's payload survives may differ: docs/reduce.md).
template <class T>
struct HalfMaxOp {
  static constexpr bool kBinary = false;
  static constexpr bool kWide = false;
  static constexpr bool kHalfKeys = true;
  // The flipped bits of -inf, and the quiet bit of a NaN.
  static constexpr uint16_t kMantissaMask = hwy::IsSame<T, hwy::bfloat16_t>() ? 0x007F : 0x03FF;
  static constexpr uint16_t kQuietBit = hwy::IsSame<T, hwy::bfloat16_t>() ? 0x0040 : 0x0200;
  template <class D>
  static HWY_INLINE hn::Vec<D> Identity(D d) {
    return hn::Zero(d);  // the key of -inf
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Combine(D, hn::Vec<D> a, hn::Vec<D> b) {
    return hn::Max(a, b);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Accumulate(D d, hn::Vec<D> acc, hn::Vec<D> bits, hn::Vec<D>) {
    const hn::RebindToSigned<D> di;
    const auto negative = hn::BitCast(d, hn::ShiftRight<15>(hn::BitCast(di, bits)));
    const auto flipped = hn::Xor(bits, hn::Or(negative, hn::Set(d, uint16_t{0x8000})));
    return hn::Max(acc, hn::Sub(flipped, hn::Set(d, kMantissaMask)));
  }
  // The bits of the value of a key (the inverse of Accumulate's map).
  static uint16_t Finish(uint16_t key) {
    const uint16_t flipped = static_cast<uint16_t>(key + kMantissaMask);
    const uint16_t bits = (flipped & 0x8000) ? flipped ^ 0x8000 : static_cast<uint16_t>(~flipped);
    const bool nan = (bits & 0x7FFF) > (0x7FFF ^ kMantissaMask);  // above inf's bits
    return nan ? static_cast<uint16_t>(bits | kQuietBit) : bits;
  }
};

// The accumulator type (ReduceAccumulatorBytes): float64 for float64 input
// and for norm, the 16-bit keys of HalfMaxOp, else float32.
template <class T, class Op>
using AccumulatorOf = std::conditional_t<
    Op::kHalfKeys, uint16_t,
    std::conditional_t<hwy::IsSame<T, double>() || Op::kWide, double, float>>;

// Lanes(d) elements of storage type T as accumulator vectors, loaded through
// io (FullVector or PartialVector, convert-inl.h).
template <class D, class T, class IO>
HWY_INLINE hn::Vec<D> LoadAccumulated(D d, const T* HWY_RESTRICT p, IO io) {
  if constexpr (hwy::IsSame<hn::TFromD<D>, double>() && !hwy::IsSame<T, double>()) {
    return hn::PromoteTo(d, io.Load(hn::Rebind<float, D>(), p));
  } else if constexpr (hwy::IsSame<hn::TFromD<D>, uint16_t>()) {
    return io.Load(d, HalfBits(p));  // HalfMaxOp: the bits as they are
  } else {
    return io.Load(d, p);
  }
}

// Reduces one row of n elements (x, and y for dot) in the order of
// reduce-tree.h. A "lanes" array holds the kW virtual lanes of a partial
// result; vectors of any width (capped at kW) update it in place.
template <class T, class Op>
struct RowReducer {
  using Storage = T;
  using A = AccumulatorOf<T, Op>;
  static constexpr bool kBinary = Op::kBinary;
  static constexpr size_t kW = kReduceLaneBytes / sizeof(A);
  static constexpr size_t kLeaf = ReduceLeafElements(sizeof(A));
  using D = hn::CappedTag<A, kW>;
  using D1 = hn::CappedTag<A, 1>;
  static_assert(sizeof(A) == ReduceAccumulatorBytes(hwy::IsSame<T, double>() || Op::kWide,
                                                    Op::kHalfKeys),
                "Reduce() cuts rows at the leaves of ReduceAccumulatorBytes");

  const T* HWY_RESTRICT x;
  const T* HWY_RESTRICT y;  // dot only
  size_t n;
  bool side_by_side;  // Tree may take full leaves side by side (the input is cache-resident)

  size_t NumLeaves() const { return (n + kLeaf - 1) / kLeaf; }

  // acc with elements [i, i + Lanes(d)) accumulated (those io loads).
  template <class DV, class IO = FullVector>
  HWY_INLINE hn::Vec<DV> Next(DV d, hn::Vec<DV> acc, size_t i, IO io = {}) const {
    const auto xv = LoadAccumulated(d, x + i, io);
    const auto yv = Op::kBinary ? LoadAccumulated(d, y + i, io) : xv;
    return Op::Accumulate(d, acc, xv, yv);
  }

  // Software prefetch of the lines kPrefetchBytes past the kW elements at
  // i (of x, and y for dot): streaming a row from L3 or memory, one thread's
  // reads otherwise waited on the hardware prefetcher (AVX3_SPR, 1 thread:
  // float32 sum/max/norm rows at 0.35-0.52 of a copy's bandwidth). A light
  // loop: not on Zen 4 (kPrefetchLightLoops), whose hardware prefetcher keeps
  // up with one leaf after another and the requests only slowed it (1
  // thread, float32 from memory: norm 4096x4096 3.5-4.8 ms -> 2.7-3.4, torch
  // 2.6-4.4; sum 16M 3.6-4.4 -> 2.9-3.9, torch 2.7-3.9).
  HWY_INLINE void PrefetchGroup(size_t i) const {
    if constexpr (!kPrefetchLightLoops) return;
    for (size_t b = 0; b < kW * sizeof(T); b += 64) {
      PrefetchAhead(reinterpret_cast<const char*>(x + i) + b);
      if (kBinary) PrefetchAhead(reinterpret_cast<const char*>(y + i) + b);
    }
  }

  HWY_INLINE void SetIdentity(A* HWY_RESTRICT lanes) const {
    const D d;
    for (size_t k = 0; k < kW; k += hn::Lanes(d)) hn::Store(Op::Identity(d), d, lanes + k);
  }

  // Element i of the leaf goes to lane i % kW: full groups of kW with
  // vectors, then the last partial group: its vectors load the elements
  // left (LoadN) and update only those lanes, each with the same operation.
  void Leaf(size_t leaf, A* HWY_RESTRICT lanes) const {
    const D d;
    const size_t step = hn::Lanes(d);
    SetIdentity(lanes);
    const size_t end = HWY_MIN(n, (leaf + 1) * kLeaf);
    size_t i = leaf * kLeaf;
#if HWY_HAVE_SCALABLE
    // Sizeless vectors cannot form an array: the lanes stay in memory.
    for (; i + kW <= end; i += kW) {
      for (size_t k = 0; k < kW; k += step) {
        hn::Store(Next(d, hn::Load(d, lanes + k), i + k), d, lanes + k);
      }
    }
#else
    // The lanes in registers: kVecs = kW / Lanes(d) independent accumulators
    // (NextGroup), starting from the identity SetIdentity stored.
    hn::Vec<D> acc[kVecs];
    for (size_t v = 0; v < kVecs; ++v) acc[v] = Op::Identity(d);
    for (; i + kW <= end; i += kW) {
      PrefetchGroup(i);
      NextGroup(i, acc);
    }
    StoreGroupLanes(acc, lanes);
#endif
    for (size_t k = 0; i < end; i += step, k += step) {
      const size_t count = HWY_MIN(step, end - i);
      const auto acc = hn::Load(d, lanes + k);
      const auto next = Next(d, acc, i, PartialVector{count});
      hn::Store(hn::IfThenElse(hn::FirstN(d, count), next, acc), d, lanes + k);
    }
  }

  // a[j] = Combine(a[j], b[j]) for every lane.
  static HWY_INLINE void CombineLanes(A* HWY_RESTRICT a, const A* HWY_RESTRICT b) {
    const D d;
    for (size_t k = 0; k < kW; k += hn::Lanes(d)) {
      hn::Store(Op::Combine(d, hn::Load(d, a + k), hn::Load(d, b + k)), d, a + k);
    }
  }

#if !HWY_HAVE_SCALABLE
  // A leaf's lanes are kVecs vector accumulators, each a chain of
  // kReduceLeafGroups dependent operations. With one or two vectors (AVX-512)
  // the chains' latency, not the arithmetic, bounded a leaf (float32 norm of
  // L2-resident rows took 2.5x sum's time), so Tree takes up to this many
  // full leaves side by side (8 chains in flight), each in Leaf's order,
  // combined as the tree combines them. Only for cache-resident input
  // (side_by_side): streamed from memory, the 2-4 interleaved streams of
  // 2-4 KiB were slower than one leaf after another (Zen 4, 1 thread,
  // float32 norm 4096x4096 5.5-6.0 ms against 3.5-4.8, 16M 5.7-6.0 against
  // 3.7-5.5), whose chains the out-of-order window overlaps.
  static constexpr size_t kVecs = kW / hn::MaxLanes(D());
  static constexpr size_t kLeavesAtOnce = kVecs <= 2 ? 4 : kVecs <= 4 ? 2 : 1;

  // bfloat16 sum and dot where a group (kW = 32 elements) is two float32
  // vectors (AVX-512): each input's group is one 64-byte load split by
  // parity (SplitPair, convert-inl.h: a shift and a mask) instead of two
  // lane-crossing widenings. The two accumulators then hold the virtual
  // lanes 0, 2, ..., 30 and 1, 3, ..., 31, each summing the same elements in
  // the same order as before, and are interleaved back wherever the lanes
  // are stored: the same bits (1 thread, Zen 4: docs/performance.md "Stop 41").
  static constexpr bool kSplitGroups =
      hwy::IsSame<T, hwy::bfloat16_t>() && hwy::IsSame<A, float>() && kVecs == 2;

  // The group of elements [i, i + kW) into a leaf's kVecs accumulators:
  // vector v takes elements [i + v Lanes(d), i + (v + 1) Lanes(d)), or, with
  // kSplitGroups, acc[0] the even elements and acc[1] the odd ones.
  HWY_INLINE void NextGroup(size_t i, hn::Vec<D>* HWY_RESTRICT acc) const {
    const D d;
    if constexpr (kSplitGroups) {
      const auto x_pair = LoadSplitPair(d, x + i);
      auto y_pair = x_pair;
      if constexpr (kBinary) y_pair = LoadSplitPair(d, y + i);
      acc[0] = Op::Accumulate(d, acc[0], x_pair.even, y_pair.even);
      acc[1] = Op::Accumulate(d, acc[1], x_pair.odd, y_pair.odd);
    } else {
      for (size_t v = 0; v < kVecs; ++v) acc[v] = Next(d, acc[v], i + v * hn::Lanes(d));
    }
  }

  // NextGroup's accumulators into the lanes array, in lane order (split ones
  // interleaved; SCALAR has no kSplitGroups, nor these shuffles).
  static HWY_INLINE void StoreGroupLanes(const hn::Vec<D>* HWY_RESTRICT acc, A* HWY_RESTRICT lanes) {
    const D d;
    if constexpr (kSplitGroups) {
#if HWY_TARGET != HWY_SCALAR
      hn::Store(hn::InterleaveWholeLower(d, acc[0], acc[1]), d, lanes);
      hn::Store(hn::InterleaveWholeUpper(d, acc[0], acc[1]), d, lanes + hn::Lanes(d));
#endif
    } else {
      for (size_t v = 0; v < kVecs; ++v) hn::Store(acc[v], d, lanes + v * hn::Lanes(d));
    }
  }

  // The tree node over the kCount full leaves from `lo` (kCount a power of two).
  template <size_t kCount>
  void FullLeavesTree(size_t lo, A* HWY_RESTRICT lanes) const {
    const D d;
    hn::Vec<D> acc[kCount][kVecs];
    for (size_t l = 0; l < kCount; ++l) {
      for (size_t v = 0; v < kVecs; ++v) acc[l][v] = Op::Identity(d);
    }
    for (size_t group = 0; group < kReduceLeafGroups; ++group) {
      for (size_t l = 0; l < kCount; ++l) {
        const size_t i = (lo + l) * kLeaf + group * kW;
        PrefetchGroup(i);
        NextGroup(i, acc[l]);
      }
    }
    for (size_t width = 1; width < kCount; width *= 2) {  // (0 1) (2 3), then (01 23)
      for (size_t l = 0; l < kCount; l += 2 * width) {
        for (size_t v = 0; v < kVecs; ++v) acc[l][v] = Op::Combine(d, acc[l][v], acc[l + width][v]);
      }
    }
    StoreGroupLanes(acc[0], lanes);
  }
#endif

  // The tree node over leaves [lo, hi).
  void Tree(size_t lo, size_t hi, A* HWY_RESTRICT lanes) const {
    if (hi - lo <= 1) {
      if (hi == lo) return SetIdentity(lanes);
      return Leaf(lo, lanes);
    }
#if !HWY_HAVE_SCALABLE
    if (side_by_side && hi * kLeaf <= n) {  // full leaves only
      if (kLeavesAtOnce >= 4 && hi - lo == 4) return FullLeavesTree<4>(lo, lanes);
      if (kLeavesAtOnce >= 2 && hi - lo == 2) return FullLeavesTree<2>(lo, lanes);
    }
#endif
    const size_t mid = lo + (hi - lo) / 2;
    Tree(lo, mid, lanes);
    alignas(kReduceLaneBytes) A right[kW];
    Tree(mid, hi, right);
    CombineLanes(lanes, right);
  }

  // The tree over [lo, hi) whose nodes `depth` levels down (CutTree) were
  // computed already, left to right, into `nodes` (kW lanes each).
  static void CombineCut(size_t lo, size_t hi, int depth, const A* HWY_RESTRICT nodes,
                         size_t* next, A* HWY_RESTRICT lanes) {
    if (IsCutNode(lo, hi, depth)) {
      const A* node = nodes + kW * (*next)++;
      for (size_t k = 0; k < kW; ++k) lanes[k] = node[k];
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    CombineCut(lo, mid, depth - 1, nodes, next, lanes);
    alignas(kReduceLaneBytes) A right[kW];
    CombineCut(mid, hi, depth - 1, nodes, next, right);
    CombineLanes(lanes, right);
  }

  // Folds the lanes pairwise (lane j with lane j + w, w = kW/2 ... 1),
  // finishes and stores the result as T.
  static void FoldAndStore(A* HWY_RESTRICT lanes, T* HWY_RESTRICT out) {
    const D d;
    size_t w = kW / 2;
    for (; w >= hn::Lanes(d); w /= 2) {
      for (size_t k = 0; k < w; k += hn::Lanes(d)) {
        hn::Store(Op::Combine(d, hn::Load(d, lanes + k), hn::Load(d, lanes + k + w)), d, lanes + k);
      }
    }
    if (w >= 1) {
      // The lanes left, [0, 2w), lie in one vector: lane j combines with
      // lane j + w slid down to it (the lanes >= w then hold what no later
      // step reads). One shuffle and one op a step instead of w scalar ones:
      // rows of 1024 bfloat16 spent as long folding as summing.
      auto v = hn::Load(d, lanes);
      for (; w >= 1; w /= 2) v = Op::Combine(d, v, hn::SlideDownLanes(d, v, w));
      hn::Store(v, d, lanes);
    }
    if constexpr (Op::kHalfKeys) {
      const uint16_t bits = Op::Finish(lanes[0]);
      hwy::CopySameSize(&bits, out);
    } else {
      using C = ComputeType<T>;
      const hn::CappedTag<C, 1> dc;
      StoreAs(hn::Set(dc, static_cast<C>(Op::Finish(lanes[0]))), dc, out);
    }
  }
};

// Calls fn(RowReducer<T, Op>-typed tag) for the dtype and op given.
template <class Fn>
HWY_INLINE void VisitReducer(ReduceOp op, DType dtype, Fn&& fn) {
  VisitCpuType(dtype, [&](auto type) HWY_ATTR {
    using T = typename decltype(type)::type;
    switch (op) {
      case ReduceOp::kSum:
        return fn(TypeTag<RowReducer<T, SumOp>>{});
      case ReduceOp::kMax:
        if constexpr (sizeof(T) == 2) {
          return fn(TypeTag<RowReducer<T, HalfMaxOp<T>>>{});
        } else {
          return fn(TypeTag<RowReducer<T, MaxOp>>{});
        }
      case ReduceOp::kDot:
        return fn(TypeTag<RowReducer<T, DotOp>>{});
      case ReduceOp::kNorm:
        return fn(TypeTag<RowReducer<T, NormOp<!hwy::IsSame<T, double>()>>>{});
    }
  });
}

// out[r] for rows [row_begin, row_end), each on this thread.
void ReduceRowsKernel(ReduceOp op, DType dtype, const void* x, const void* y, void* out,
                      size_t row_begin, size_t row_end, size_t cols, bool side_by_side) {
  VisitReducer(op, dtype, [&](auto tag) HWY_ATTR {
    using R = typename decltype(tag)::type;
    using T = typename R::Storage;
    alignas(kReduceLaneBytes) typename R::A lanes[R::kW];
    for (size_t r = row_begin; r < row_end; ++r) {
      const R row{static_cast<const T*>(x) + r * cols,
                  R::kBinary ? static_cast<const T*>(y) + r * cols : nullptr, cols, side_by_side};
      row.Tree(0, row.NumLeaves(), lanes);
      R::FoldAndStore(lanes, static_cast<T*>(out) + r);
    }
  });
}

// Nodes [node_begin, node_end) of one row's cut tree into `partials`
// (kReduceLaneBytes each, at their node index).
void ReduceCutNodesKernel(ReduceOp op, DType dtype, const void* x, const void* y, size_t cols,
                          bool side_by_side, const LeafRange* nodes, size_t node_begin,
                          size_t node_end, void* partials) {
  VisitReducer(op, dtype, [&](auto tag) HWY_ATTR {
    using R = typename decltype(tag)::type;
    using T = typename R::Storage;
    const R row{static_cast<const T*>(x), static_cast<const T*>(y), cols, side_by_side};
    auto* lanes = static_cast<typename R::A*>(partials);
    for (size_t i = node_begin; i < node_end; ++i) {
      row.Tree(nodes[i].lo, nodes[i].hi, lanes + i * R::kW);
    }
  });
}

// Combines the cut nodes of one row of `cols` elements and stores out[0].
void FinishCutTreeKernel(ReduceOp op, DType dtype, size_t cols, int depth, const void* partials,
                         void* out) {
  VisitReducer(op, dtype, [&](auto tag) HWY_ATTR {
    using R = typename decltype(tag)::type;
    using T = typename R::Storage;
    const R row{nullptr, nullptr, cols, false};
    alignas(kReduceLaneBytes) typename R::A lanes[R::kW];
    size_t next = 0;
    R::CombineCut(0, row.NumLeaves(), depth, static_cast<const typename R::A*>(partials), &next,
                  lanes);
    R::FoldAndStore(lanes, static_cast<T*>(out));
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

// Elements per thread below which waking threads costs more than it saves.
constexpr int64_t kReduceMinChunk = 1 << 15;

// Input (x, and y for dot) up to this size is taken as cache-resident: Tree's
// leaves go side by side (RowReducer::kLeavesAtOnce).
constexpr size_t kReduceSideBySideMaxBytes = size_t{4} << 20;

HWY_EXPORT(ReduceRowsKernel);
HWY_EXPORT(ReduceCutNodesKernel);
HWY_EXPORT(FinishCutTreeKernel);

void Reduce(const ReduceArgs& args, ReduceOp op) {
  if (args.rows == 0) return;
  const size_t elem = DTypeSizeOf(args.dtype);
  const auto* x = static_cast<const char*>(args.x);
  const auto* y = static_cast<const char*>(args.y);
  auto* out = static_cast<char*>(args.out);
  const int threads = NumThreads();
  const size_t input_bytes = static_cast<size_t>(args.rows) * static_cast<size_t>(args.cols) *
                             elem * (args.y != nullptr ? 2 : 1);
  const bool side_by_side = input_bytes <= kReduceSideBySideMaxBytes;
  if (threads == 1 || args.rows >= threads || args.cols < 2 * kReduceMinChunk) {
    // Rows in parallel, each on one thread.
    const int64_t min_rows = std::max<int64_t>(1, kReduceMinChunk / std::max<int64_t>(args.cols, 1));
    ParallelFor(args.rows, min_rows, 1, [&](int64_t begin, int64_t end) {
      HWY_DYNAMIC_DISPATCH(ReduceRowsKernel)(op, args.dtype, x, y, out, begin, end, args.cols,
                                                side_by_side);
    });
    return;
  }
  // Fewer rows than threads, and long: each row's tree is cut into up to 64
  // nodes that threads compute independently; combining them in tree order
  // gives the single-threaded result bit for bit.
  const bool wide = args.dtype == DType::kFloat64 || op == ReduceOp::kNorm;
  const bool half_max = op == ReduceOp::kMax && elem == 2;
  const size_t leaf = ReduceLeafElements(ReduceAccumulatorBytes(wide, half_max));
  const size_t cols = static_cast<size_t>(args.cols);
  int depth = 0;
  while (depth < kReduceMaxCutDepth && (int64_t{1} << depth) < 4 * int64_t{threads}) ++depth;
  LeafRange nodes[kReduceMaxCutNodes];
  const size_t count = CutTree(0, (cols + leaf - 1) / leaf, depth, nodes, 0);
  alignas(kReduceLaneBytes) unsigned char partials[kReduceMaxCutNodes * kReduceLaneBytes];
  for (int64_t r = 0; r < args.rows; ++r) {
    const char* x_row = x + r * cols * elem;
    const char* y_row = y ? y + r * cols * elem : nullptr;
    ParallelFor(static_cast<int64_t>(count), 1, 1, [&](int64_t begin, int64_t end) {
      HWY_DYNAMIC_DISPATCH(ReduceCutNodesKernel)(op, args.dtype, x_row, y_row, cols, side_by_side,
                                                 nodes, begin, end, partials);
    });
    HWY_DYNAMIC_DISPATCH(FinishCutTreeKernel)(op, args.dtype, cols, depth, partials,
                                              out + r * elem);
  }
}

}  // namespace cpu
}  // namespace hetkern
#endif  // HWY_ONCE
