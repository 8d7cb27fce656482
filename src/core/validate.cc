#include "src/core/validate.h"

#include <cstdint>
#include <sstream>
#include <string>

namespace hetkern {
namespace {

bool ToDType(DLDataType t, Accept accept, DType* out) {
  if (t.lanes != 1) return false;
  if (accept == Accept::kFloat8E4M3) {
    const bool e4m3 = (t.code == kDLFloat8_e4m3fn || t.code == kDLUInt) && t.bits == 8;
    if (e4m3) *out = DType::kFloat8E4M3;
    return e4m3;
  }
  if (t.code == kDLFloat && t.bits == 32) *out = DType::kFloat32;
  else if (t.code == kDLFloat && t.bits == 64) *out = DType::kFloat64;
  else if (t.code == kDLFloat && t.bits == 16) *out = DType::kFloat16;
  else if (t.code == kDLBfloat && t.bits == 16) *out = DType::kBFloat16;
  else return false;
  return true;
}

}  // namespace

std::string ShapeString(const int64_t* dims, int ndim) {
  std::ostringstream os;
  os << '(';
  for (int i = 0; i < ndim; ++i) os << (i ? ", " : "") << dims[i];
  os << (ndim == 1 ? ",)" : ")");
  return os.str();
}

std::string ShapeString(const TensorView& t) { return ShapeString(t.shape().data(), t.ndim()); }

std::string DeviceString(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda:" + std::to_string(d.device_id);
    default:
      return "device type " + std::to_string(d.device_type) + " (id " +
             std::to_string(d.device_id) + ")";
  }
}

// Our own formatting: tvm-ffi's operator<< throws for some codes (complex).
std::string DLTypeString(DLDataType t) {
  std::string code;
  switch (t.code) {
    case kDLInt: code = "int"; break;
    case kDLUInt: code = "uint"; break;
    case kDLFloat: code = "float"; break;
    case kDLBfloat: code = "bfloat"; break;
    case kDLComplex: code = "complex"; break;
    case kDLBool: code = "bool"; break;
    case kDLFloat8_e4m3fn: return "float8_e4m3fn";
    case kDLFloat8_e5m2: return "float8_e5m2";
    default: code = "type-code-" + std::to_string(t.code) + "-"; break;
  }
  std::string s = code + std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

bool SameDevice(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

void CheckSameDevice(const char* op, const char* a_name, DLDevice a_device, const char* b_name,
                     DLDevice b_device) {
  HETKERN_CHECK(SameDevice(a_device, b_device), ValueError)
      << "hetkern." << op << ": '" << b_name << "' is on " << DeviceString(b_device)
      << "; expected " << DeviceString(a_device) << " like '" << a_name << "'";
}

void CheckSameDType(const char* op, const char* a_name, DType a_dtype, const char* b_name,
                    DType b_dtype) {
  HETKERN_CHECK(a_dtype == b_dtype, ValueError)
      << "hetkern." << op << ": '" << b_name << "' has dtype " << DTypeName(b_dtype)
      << "; expected " << DTypeName(a_dtype) << " like '" << a_name << "'";
}

RowShape LastDimRows(const TensorView& t) {
  if (t.ndim() == 0) return RowShape{1, 1};
  int64_t rows = 1;
  for (int i = 0; i + 1 < t.ndim(); ++i) rows *= t.size(i);
  return RowShape{rows, t.size(t.ndim() - 1)};
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat8E4M3:
      return "float8_e4m3fn";
  }
  return "?";
}

ArrayArg CheckArrayAnyLayout(const char* op, const char* name, const TensorView& t,
                             Accept accept) {
  ArrayArg a;
  HETKERN_CHECK(ToDType(t.dtype(), accept, &a.dtype), ValueError)
      << "hetkern." << op << ": '" << name << "' has dtype " << DLTypeString(t.dtype())
      << (accept == Accept::kFloat8E4M3
              ? "; expected float8_e4m3fn (or uint8 holding float8_e4m3fn bits)"
              : "; expected one of float32, float64, float16, bfloat16");
  // Sizes come from the caller's DLTensor: a negative dimension or a byte
  // count past int64 would make every later size computation wrong (the
  // contiguity check below multiplies dimensions too), so this comes first.
  int64_t numel = 1;
  bool size_ok = true;
  const int64_t max_numel = INT64_MAX / static_cast<int64_t>(DTypeSizeOf(a.dtype));
  for (int i = 0; i < t.ndim() && size_ok; ++i) {
    const int64_t dim = t.size(i);
    // numel * dim <= max_numel, tested without a 64-bit division (tens of
    // cycles per dimension of every array of every call).
    int64_t next;
    size_ok = dim >= 0 && !__builtin_mul_overflow(numel, dim, &next) && next <= max_numel;
    if (size_ok) numel = next;
  }
  HETKERN_CHECK(size_ok || numel == 0, ValueError)
      << "hetkern." << op << ": '" << name << "' has shape " << ShapeString(t)
      << "; expected non-negative dimensions whose size in bytes fits in int64";
  a.device = t.device();
#if HETKERN_WITH_CUDA
  const bool device_ok = a.device.device_type == kDLCPU || a.device.device_type == kDLCUDA;
#else
  HETKERN_CHECK(a.device.device_type != kDLCUDA, ValueError)
      << "hetkern." << op << ": '" << name << "' is on " << DeviceString(a.device)
      << ", but this hetkern was built without CUDA support (rebuild with -Dcuda=enabled)";
  const bool device_ok = a.device.device_type == kDLCPU;
#endif
  HETKERN_CHECK(device_ok, ValueError)
      << "hetkern." << op << ": '" << name << "' is on " << DeviceString(a.device)
      << "; expected a CPU or CUDA array";
  a.numel = numel;
  a.data = static_cast<char*>(t.data_ptr()) + t.byte_offset();
  return a;
}

ArrayArg CheckArray(const char* op, const char* name, const TensorView& t) {
  const ArrayArg a = CheckArrayAnyLayout(op, name, t);
  HETKERN_CHECK(t.IsContiguous(), ValueError)
      << "hetkern." << op << ": '" << name << "' must be contiguous (C order); got shape "
      << ShapeString(t) << " with non-contiguous strides; pass a contiguous copy";
  return a;
}

RowsView CheckRowsArray(const char* op, const char* name, const TensorView& t, int row_dims,
                        Access access, Accept accept) {
  RowsView v;
  v.array = CheckArrayAnyLayout(op, name, t, accept);
  const int ndim = t.ndim();
  const int lead = ndim > row_dims ? ndim - row_dims : 0;
  // Products of a nonempty array are bounded by numel; an empty one's other
  // dimensions may be huge, so they saturate instead of overflowing.
  const auto product = [&](int begin, int end) {
    int64_t p = 1;
    for (int i = begin; i < end; ++i) {
      if (__builtin_mul_overflow(p, t.size(i), &p)) p = INT64_MAX;
    }
    return p;
  };
  v.rows = product(0, lead);
  v.cols = product(lead, ndim);
  v.row_stride = v.cols;
  if (t.IsContiguous() || v.array.numel == 0) return v;  // also: strides absent
  // Torch's rule: size-1 dimensions have any stride. The row's dimensions
  // must be packed from stride 1; the leading ones must be one arithmetic
  // progression of rows (each stride the next one times its size).
  bool ok = true;
  int64_t expected = 1;
  for (int i = ndim - 1; i >= lead && ok; --i) {
    if (t.size(i) == 1) continue;
    ok = t.stride(i) == expected;
    expected *= t.size(i);
  }
  int64_t row_stride = -1;  // of the innermost leading dimension of size > 1
  int64_t span = 1;         // rows covered by the dimensions inside dimension i
  for (int i = lead - 1; i >= 0 && ok; --i) {
    if (t.size(i) == 1) continue;
    if (row_stride < 0) {
      row_stride = t.stride(i);
      ok = row_stride >= 0;
    } else {
      int64_t step;
      ok = !__builtin_mul_overflow(row_stride, span, &step) && t.stride(i) == step;
    }
    span *= t.size(i);
  }
  HETKERN_CHECK(ok, ValueError)
      << "hetkern." << op << ": '" << name << "' must be contiguous along its last "
      << (row_dims == 1 ? std::string("dimension") : std::to_string(row_dims) + " dimensions")
      << ", its other dimensions collapsible to one non-negative row stride (rows of any "
         "stride, as from x[:, :n] or qkv.split); got shape "
      << ShapeString(t) << " with strides " << ShapeString(t.strides().data(), ndim)
      << "; pass a contiguous copy";
  if (row_stride >= 0) v.row_stride = row_stride;
  // The last row ends within int64 bytes: (rows - 1) * stride + cols.
  int64_t last_start, end;
  const bool extent_ok =
      !__builtin_mul_overflow(v.rows - 1, v.row_stride, &last_start) &&
      !__builtin_add_overflow(last_start, v.cols, &end) &&
      end <= INT64_MAX / static_cast<int64_t>(DTypeSizeOf(v.array.dtype));
  HETKERN_CHECK(extent_ok, ValueError)
      << "hetkern." << op << ": '" << name << "' spans more than 2^63 bytes with row stride "
      << v.row_stride;
  HETKERN_CHECK(access == Access::kRead || v.rows <= 1 || v.row_stride >= v.cols, ValueError)
      << "hetkern." << op << ": '" << name << "' is written, but its rows overlap one another "
      << "(row stride " << v.row_stride << " < row length " << v.cols
      << "); pass an array whose rows are disjoint";
  return v;
}

Footprint FootprintOf(const RowsView& v) {
  const auto elem = static_cast<int64_t>(DTypeSizeOf(v.array.dtype));
  return Footprint{reinterpret_cast<uintptr_t>(v.array.data), v.cols == 0 ? 0 : v.rows,
                   v.cols * elem, v.row_stride * elem};
}

Footprint FootprintOf(const TensorView& t) {
  const DLDataType d = t.dtype();
  const auto bytes = static_cast<int64_t>(t.numel()) * ((d.bits * d.lanes + 7) / 8);
  return Footprint{reinterpret_cast<uintptr_t>(t.data_ptr()) + t.byte_offset(), bytes ? 1 : 0,
                   bytes, bytes};
}

bool Disjoint(const Footprint& a, const Footprint& b) {
  if (a.rows == 0 || b.rows == 0 || a.row_bytes == 0 || b.row_bytes == 0) return true;
  // Extents in uint64 (CheckRowsArray bounded each to int64).
  const uint64_t a_end = a.begin + uint64_t(a.rows - 1) * uint64_t(a.stride_bytes) + a.row_bytes;
  const uint64_t b_end = b.begin + uint64_t(b.rows - 1) * uint64_t(b.stride_bytes) + b.row_bytes;
  if (a_end <= b.begin || b_end <= a.begin) return true;
  if (a.rows <= 1 && b.rows <= 1) return false;
  // A one-row footprint takes the other's stride: it is then one of a grid
  // of rows like the other's. With a common stride S, every row of b sits in
  // the gap after a row of a when b's offset modulo S lies in [a.row, S - b.row].
  const int64_t stride = a.rows > 1 ? a.stride_bytes : b.stride_bytes;
  if ((a.rows > 1 && b.rows > 1 && a.stride_bytes != b.stride_bytes) || stride <= 0) return false;
  const auto s = static_cast<uint64_t>(stride);
  const uint64_t offset = b.begin >= a.begin ? (b.begin - a.begin) % s : (s - (a.begin - b.begin) % s) % s;
  return offset >= uint64_t(a.row_bytes) && offset + uint64_t(b.row_bytes) <= s;
}

void CheckSameOrDisjoint(const char* op, const char* out_name, const RowsView& out,
                         const char* in_name, const RowsView& in) {
  const Footprint o = FootprintOf(out), i = FootprintOf(in);
  const bool same = o.begin == i.begin && o.rows == i.rows && o.row_bytes == i.row_bytes &&
                    (o.rows <= 1 || o.stride_bytes == i.stride_bytes);
  HETKERN_CHECK(same || Disjoint(o, i), ValueError)
      << "hetkern." << op << ": '" << out_name << "' partially overlaps '" << in_name
      << "'; pass the same array for in-place use or a non-overlapping one";
}

void CheckDisjoint(const char* op, const char* written_name, const Footprint& written,
                   const char* other_name, const Footprint& other) {
  HETKERN_CHECK(Disjoint(written, other), ValueError)
      << "hetkern." << op << ": '" << written_name << "' overlaps '" << other_name << "'; '"
      << written_name << "' is written, so it must not share memory with '" << other_name
      << "'; pass separate arrays";
}

void CheckSameLayout(const char* op, const char* a_name, const TensorView& a, const char* b_name,
                     const TensorView& b) {
  HETKERN_CHECK(a.dtype() == b.dtype(), ValueError)
      << "hetkern." << op << ": '" << b_name << "' has dtype " << DLTypeString(b.dtype())
      << "; expected " << DLTypeString(a.dtype()) << " like '" << a_name << "'";
  CheckSameDevice(op, a_name, a.device(), b_name, b.device());
  bool same_shape = a.ndim() == b.ndim();
  for (int i = 0; same_shape && i < a.ndim(); ++i) same_shape = a.size(i) == b.size(i);
  HETKERN_CHECK(same_shape, ValueError)
      << "hetkern." << op << ": '" << b_name << "' has shape " << ShapeString(b) << "; expected "
      << ShapeString(a) << " like '" << a_name << "'";
}

void CheckNoPartialOverlap(const char* op, const char* out_name, const ArrayArg& out,
                           const char* in_name, const ArrayArg& in) {
  if (out.data == in.data || out.numel == 0 || in.numel == 0) return;
  const auto out_begin = reinterpret_cast<uintptr_t>(out.data);
  const auto in_begin = reinterpret_cast<uintptr_t>(in.data);
  const uintptr_t out_end = out_begin + out.numel * DTypeSizeOf(out.dtype);
  const uintptr_t in_end = in_begin + in.numel * DTypeSizeOf(in.dtype);
  HETKERN_CHECK(out_end <= in_begin || in_end <= out_begin, ValueError)
      << "hetkern." << op << ": '" << out_name << "' partially overlaps '" << in_name
      << "'; pass the same array for in-place use or a non-overlapping one";
}

void CheckDisjoint(const char* op, const char* written_name, const TensorView& written,
                   const char* other_name, const TensorView& other) {
  CheckDisjoint(op, written_name, FootprintOf(written), other_name, FootprintOf(other));
}

UnaryArgs CheckUnary(const char* op, const TensorView& out, const TensorView& x) {
  const ArrayArg xa = CheckArray(op, "x", x);
  CheckSameLayout(op, "x", x, "out", out);
  const ArrayArg oa = CheckArray(op, "out", out);
  CheckNoPartialOverlap(op, "out", oa, "x", xa);
  return UnaryArgs{xa.dtype, xa.device, xa.numel, xa.data, oa.data};
}

}  // namespace hetkern
