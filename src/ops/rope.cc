// Entry of rope: validate every argument (on CPU the position values too),
// then rotate query and key in place on the arguments' device.
#include <tvm/ffi/function.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "hetkern/hetkern.h"
#include "src/core/kernels.h"
#include "src/core/validate.h"

namespace hetkern {
namespace {

constexpr const char* kOp = "rope";

// query/key: (*positions.shape, heads * head_size) or
// (*positions.shape, heads, head_size); returns the number of heads.
// Layout (each token's heads contiguous, tokens any stride) is checked by
// TokenRows.
int64_t CheckHeads(const char* name, const TensorView& t, const TensorView& positions,
                   int64_t head_size) {
  const int lead = positions.ndim();
  bool leading_ok = t.ndim() == lead + 1 || t.ndim() == lead + 2;
  for (int i = 0; leading_ok && i < lead; ++i) leading_ok = t.size(i) == positions.size(i);
  HETKERN_CHECK(leading_ok, ValueError)
      << "hetkern." << kOp << ": '" << name << "' has shape " << ShapeString(t)
      << "; expected (*S, heads * head_size) or (*S, heads, head_size) with S = "
      << ShapeString(positions) << ", the shape of 'positions'";
  const int64_t last = t.size(t.ndim() - 1);
  if (t.ndim() == lead + 2) {
    HETKERN_CHECK(last == head_size, ValueError)
        << "hetkern." << kOp << ": '" << name << "' has shape " << ShapeString(t)
        << "; its last dim is the head, expected head_size = " << head_size;
    return t.size(lead);
  }
  HETKERN_CHECK(last % head_size == 0, ValueError)
      << "hetkern." << kOp << ": '" << name << "' has shape " << ShapeString(t) << "; expected its last dim ("
      << last << ") to be a multiple of head_size = " << head_size;
  return last / head_size;
}

// query/key as rows of tokens: the dimensions after positions' form one
// contiguous row, tokens any stride (vLLM's q, k, v = qkv.split(...)).
// Checked before CheckHeads, so that a transposed array is reported as such;
// CheckHeads then refuses a dimension count other than 1 or 2 past positions'.
RowsView TokenRows(const char* name, const TensorView& t, const TensorView& positions) {
  const int row_dims = std::clamp(t.ndim() - positions.ndim(), 1, 2);
  return CheckRowsArray(kOp, name, t, row_dims, Access::kWritten);
}

template <class Index>
void CheckPositionValues(const Index* positions, int64_t n, int64_t max_position) {
  for (int64_t i = 0; i < n; ++i) {
    HETKERN_CHECK(positions[i] >= 0 && positions[i] < max_position, ValueError)
        << "hetkern." << kOp << ": 'positions' holds " << static_cast<int64_t>(positions[i])
        << " at flat index " << i << "; expected values in [0, " << max_position
        << ") (the rows of 'cos_sin_cache')";
  }
}

}  // namespace

void rope(TensorView query, tvm::ffi::Optional<TensorView> key, TensorView positions,
          TensorView cos_sin_cache, int64_t head_size, bool is_neox) {
  RopeArgs args{};
  const ArrayArg q = CheckArrayAnyLayout(kOp, "query", query);  // layout: TokenRows
  args.dtype = q.dtype;
  args.device = q.device;
  args.query = q.data;
  args.is_neox = is_neox;

  // positions: int64 or int32, 1-D (num_tokens) or 2-D (batch, seq), contiguous.
  const DLDataType pt = positions.dtype();
  const bool int64 = pt.code == kDLInt && pt.bits == 64 && pt.lanes == 1;
  const bool int32 = pt.code == kDLInt && pt.bits == 32 && pt.lanes == 1;
  HETKERN_CHECK(int64 || int32, ValueError)
      << "hetkern." << kOp << ": 'positions' has dtype " << DLTypeString(pt)
      << "; expected int64 or int32";
  args.position_type = int64 ? PositionType::kInt64 : PositionType::kInt32;
  CheckSameDevice(kOp, "query", q.device, "positions", positions.device());
  HETKERN_CHECK(positions.ndim() == 1 || positions.ndim() == 2, ValueError)
      << "hetkern." << kOp << ": 'positions' has shape " << ShapeString(positions)
      << "; expected (num_tokens,) or (batch, seq)";
  HETKERN_CHECK(positions.IsContiguous(), ValueError)
      << "hetkern." << kOp << ": 'positions' must be contiguous (C order); pass a contiguous copy";
  args.num_tokens = positions.numel();
  args.positions = static_cast<const char*>(positions.data_ptr()) + positions.byte_offset();

  HETKERN_CHECK(head_size > 0, ValueError)
      << "hetkern." << kOp << ": 'head_size' is " << head_size << "; expected > 0";
  args.head_size = head_size;
  const RowsView query_rows = TokenRows("query", query, positions);
  args.num_heads = CheckHeads("query", query, positions, head_size);
  args.query_stride = query_rows.row_stride;

  RowsView key_rows{};
  if (key.has_value()) {
    const TensorView& kv = *key;
    const ArrayArg k = CheckArrayAnyLayout(kOp, "key", kv);
    CheckSameDType(kOp, "query", q.dtype, "key", k.dtype);
    CheckSameDevice(kOp, "query", q.device, "key", k.device);
    key_rows = TokenRows("key", kv, positions);
    args.num_kv_heads = CheckHeads("key", kv, positions, head_size);
    args.key = k.data;
    args.key_stride = key_rows.row_stride;
  }

  const ArrayArg c = CheckArray(kOp, "cos_sin_cache", cos_sin_cache);
  HETKERN_CHECK(c.dtype == q.dtype || c.dtype == DType::kFloat32, ValueError)
      << "hetkern." << kOp << ": 'cos_sin_cache' has dtype " << DTypeName(c.dtype) << "; expected "
      << DTypeName(q.dtype) << " like 'query'" << (q.dtype == DType::kFloat32 ? "" : ", or float32");
  CheckSameDevice(kOp, "query", q.device, "cos_sin_cache", c.device);
  HETKERN_CHECK(cos_sin_cache.ndim() == 2, ValueError)
      << "hetkern." << kOp << ": 'cos_sin_cache' has shape " << ShapeString(cos_sin_cache)
      << "; expected (max_position, rot_dim)";
  args.max_position = cos_sin_cache.size(0);
  args.rot_dim = cos_sin_cache.size(1);
  HETKERN_CHECK(args.rot_dim >= 2 && args.rot_dim % 2 == 0 && args.rot_dim <= head_size, ValueError)
      << "hetkern." << kOp << ": 'cos_sin_cache' has shape " << ShapeString(cos_sin_cache)
      << "; expected rot_dim (its last dim) even and in [2, head_size = " << head_size << "]";
  args.cache_dtype = c.dtype;
  args.cos_sin_cache = c.data;

  // Memory the kernel writes (query, key, in place) must be disjoint from
  // everything else it touches: the result would depend on the order the
  // kernel visits tokens.
  const Footprint q_bytes = FootprintOf(query_rows), cache_bytes = FootprintOf(cos_sin_cache),
                  position_bytes = FootprintOf(positions);
  if (key.has_value()) CheckDisjoint(kOp, "query", q_bytes, "key", FootprintOf(key_rows));
  CheckDisjoint(kOp, "query", q_bytes, "cos_sin_cache", cache_bytes);
  CheckDisjoint(kOp, "query", q_bytes, "positions", position_bytes);
  if (key.has_value()) {
    CheckDisjoint(kOp, "key", FootprintOf(key_rows), "cos_sin_cache", cache_bytes);
    CheckDisjoint(kOp, "key", FootprintOf(key_rows), "positions", position_bytes);
  }

  // The CUDA kernel indexes within a token in int.
  HETKERN_CHECK(args.device.device_type != kDLCUDA ||
                    (args.num_heads + args.num_kv_heads) * args.head_size <= INT32_MAX,
                ValueError)
      << "hetkern." << kOp << ": 'query' and 'key' have " << args.num_heads + args.num_kv_heads
      << " heads of " << head_size << " features per token; expected < 2^31 per token on CUDA";

  // On CPU an out-of-range position is an error raised before any write; on
  // CUDA reading the values would need a host sync, so the kernel skips such
  // tokens instead (leaves them unchanged).
  if (args.device.device_type == kDLCPU) {
    if (int64) {
      CheckPositionValues(static_cast<const int64_t*>(args.positions), args.num_tokens, args.max_position);
    } else {
      CheckPositionValues(static_cast<const int32_t*>(args.positions), args.num_tokens, args.max_position);
    }
  }

  if (args.num_tokens == 0 || args.num_heads + args.num_kv_heads == 0) return;
  HETKERN_LAUNCH(args.device, Rope(args));
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rope, hetkern::rope);
