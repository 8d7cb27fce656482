// The fixed summation order of the CPU reductions, shared by the per-target
// kernels and the threading code (plain index arithmetic, no SIMD).
//
// A row is cut into leaves of kReduceLeafGroups * W elements, W being the
// number of "virtual lanes" (kReduceLaneBytes / sizeof(accumulator)). Inside a
// leaf, element i goes to virtual lane i % W, accumulated in index order.
// Leaves are combined lane by lane along one binary tree that splits
// [lo, hi) at lo + (hi - lo) / 2 down to single leaves; the W lanes of the
// root are finally folded pairwise (lane j += lane j + w, w = W/2, ..., 1).
// Nothing in this order depends on the thread count or the SIMD width.
#pragma once

#include <cstddef>

namespace hetkern {
namespace cpu {

constexpr size_t kReduceLaneBytes = 128;
constexpr size_t kReduceLeafGroups = 32;
// The most nodes a row's tree is cut into for threading (2^6).
constexpr int kReduceMaxCutDepth = 6;
constexpr size_t kReduceMaxCutNodes = size_t{1} << kReduceMaxCutDepth;

// Elements per leaf for an accumulator of `accumulator_bytes` bytes.
constexpr size_t ReduceLeafElements(size_t accumulator_bytes) {
  return kReduceLeafGroups * (kReduceLaneBytes / accumulator_bytes);
}

// The accumulator's size: float64 (float64 input, and norm), 16-bit order
// keys (max of float16/bfloat16), else float32. The kernels' accumulator
// types follow it (RowReducer checks), and the threading code cuts rows at
// the leaves it implies.
constexpr size_t ReduceAccumulatorBytes(bool wide, bool half_max) {
  return wide ? 8 : half_max ? 2 : 4;
}

struct LeafRange {
  size_t lo, hi;
};

// Whether the tree node [lo, hi) is where a cut `depth` levels below it ends
// the descent: single leaves (and the empty root) are never split.
inline bool IsCutNode(size_t lo, size_t hi, int depth) { return depth == 0 || hi - lo <= 1; }

// Appends, left to right, the nodes at which the tree over leaves [lo, hi) is
// cut `depth` levels down; returns the new count.
inline size_t CutTree(size_t lo, size_t hi, int depth, LeafRange* nodes, size_t count) {
  if (IsCutNode(lo, hi, depth)) {
    nodes[count] = LeafRange{lo, hi};
    return count + 1;
  }
  const size_t mid = lo + (hi - lo) / 2;
  count = CutTree(lo, mid, depth - 1, nodes, count);
  return CutTree(mid, hi, depth - 1, nodes, count);
}

}  // namespace cpu
}  // namespace hetkern
