#include "src/core/validate.h"

#include <cstdint>
#include <sstream>
#include <string>

namespace hetkern {
namespace {

bool ToDType(DLDataType t, DType* out) {
  if (t.lanes != 1) return false;
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
  }
  return "?";
}

ArrayArg CheckArray(const char* op, const char* name, const TensorView& t) {
  ArrayArg a;
  HETKERN_CHECK(ToDType(t.dtype(), &a.dtype), ValueError)
      << "hetkern." << op << ": '" << name << "' has dtype " << DLTypeString(t.dtype())
      << "; expected one of float32, float64, float16, bfloat16";
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
  HETKERN_CHECK(t.IsContiguous(), ValueError)
      << "hetkern." << op << ": '" << name << "' must be contiguous (C order); got shape "
      << ShapeString(t) << " with non-contiguous strides; pass a contiguous copy";
  a.numel = numel;
  a.data = static_cast<char*>(t.data_ptr()) + t.byte_offset();
  return a;
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
  const auto bytes = [](const TensorView& t) {
    const DLDataType d = t.dtype();
    return static_cast<uintptr_t>(t.numel()) * ((d.bits * d.lanes + 7) / 8);
  };
  const uintptr_t w_bytes = bytes(written), o_bytes = bytes(other);
  if (w_bytes == 0 || o_bytes == 0) return;
  const auto w_begin = reinterpret_cast<uintptr_t>(written.data_ptr()) + written.byte_offset();
  const auto o_begin = reinterpret_cast<uintptr_t>(other.data_ptr()) + other.byte_offset();
  HETKERN_CHECK(w_begin + w_bytes <= o_begin || o_begin + o_bytes <= w_begin, ValueError)
      << "hetkern." << op << ": '" << written_name << "' overlaps '" << other_name << "'; '"
      << written_name << "' is written, so it must not share memory with '" << other_name
      << "'; pass separate arrays";
}

UnaryArgs CheckUnary(const char* op, const TensorView& out, const TensorView& x) {
  const ArrayArg xa = CheckArray(op, "x", x);
  CheckSameLayout(op, "x", x, "out", out);
  const ArrayArg oa = CheckArray(op, "out", out);
  CheckNoPartialOverlap(op, "out", oa, "x", xa);
  return UnaryArgs{xa.dtype, xa.device, xa.numel, xa.data, oa.data};
}

}  // namespace hetkern
