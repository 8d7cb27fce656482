// Argument validation shared by every op entry. Each check throws a
// tvm::ffi::Error of kind ValueError or TypeError (surfacing in Python as the
// builtin exception) whose message names the op, the argument and what was
// expected; nothing is written before all checks of an op have passed.
#pragma once

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <cstdint>
#include <string>

#include "src/core/args.h"

// Like TVM_FFI_CHECK, without its "Check failed: (...) is false" prefix: the
// message streamed after it is the whole message users see.
#define HETKERN_CHECK(cond, ErrorKind) \
  if (cond) {                          \
  } else                               \
    TVM_FFI_THROW(ErrorKind)

namespace hetkern {

using tvm::ffi::TensorView;

// A tensor argument that passed CheckArray.
struct ArrayArg {
  void* data;  // first element (byte_offset applied)
  int64_t numel;
  DType dtype;
  DLDevice device;
};

const char* DTypeName(DType dtype);

// Message helpers; none of them throws (a throw while building an error
// message terminates the process).
// "(2, 3)", "(4,)", "()": the shape of `t`, or of the first `ndim` of `dims`.
std::string ShapeString(const TensorView& t);
std::string ShapeString(const int64_t* dims, int ndim);
// "cpu", "cuda:1", else "device type N (id M)".
std::string DeviceString(DLDevice d);
// "float32", "int64", "bool8", "float32x4": any DLDataType, supported or not.
std::string DLTypeString(DLDataType t);

bool SameDevice(DLDevice a, DLDevice b);

// `b_device` is `a_device`: "'b' is on cpu; expected cuda:0 like 'a'".
void CheckSameDevice(const char* op, const char* a_name, DLDevice a_device, const char* b_name,
                     DLDevice b_device);

// `b_dtype` is `a_dtype`: "'b' has dtype float64; expected float32 like 'a'".
void CheckSameDType(const char* op, const char* a_name, DType a_dtype, const char* b_name,
                    DType b_dtype);

// The rows of `t` over its last dimension: cols is the last dimension, rows
// the product of the others; a 0-d array is one row of one element.
struct RowShape {
  int64_t rows;
  int64_t cols;
};
RowShape LastDimRows(const TensorView& t);

// The dtypes an array argument may have: one of the four float types, or
// float8_e4m3fn (also as uint8 holding its bits: NumPy has no fp8 dtype),
// which only the quant ops' 'out' asks for.
enum class Accept : uint8_t { kFloat, kFloat8E4M3 };

// `t` has a supported float dtype (or what `accept` says), lives on the CPU
// or (in a CUDA build) a CUDA device, and is contiguous.
ArrayArg CheckArray(const char* op, const char* name, const TensorView& t);
// The same without the contiguity check (the caller checks the layout, e.g.
// with CheckRowsArray); numel and data as in CheckArray.
ArrayArg CheckArrayAnyLayout(const char* op, const char* name, const TensorView& t,
                             Accept accept = Accept::kFloat);

// `b` has the same shape, dtype and device as `a`.
void CheckSameLayout(const char* op, const char* a_name, const TensorView& a, const char* b_name,
                     const TensorView& b);

// `out` and `in` are the same array or do not overlap at all: a partial
// overlap would make elementwise results depend on the order of the loop.
void CheckNoPartialOverlap(const char* op, const char* out_name, const ArrayArg& out,
                           const char* in_name, const ArrayArg& in);

// `written` and `other` (contiguous; any dtype, integers included) share no
// byte at all, not even when they are the same array: for ops whose result
// would depend on the order of the writes (in place impossible or unsafe).
// Empty arrays never overlap.
void CheckDisjoint(const char* op, const char* written_name, const TensorView& written,
                   const char* other_name, const TensorView& other);

// ---- Row-strided views ----------------------------------------------------
// The row ops (norms, rope, gated activations, softmax) accept what vLLM's
// ops accept: a row (the trailing dimensions) contiguous, rows any stride,
// e.g. `q, k, v = qkv.split(...)` or `x[:, :hidden]`.

enum class Access : uint8_t { kRead, kWritten };

// A tensor checked as rows: its trailing `row_dims` dimensions form one row
// of `cols` contiguous elements, its leading dimensions collapse into `rows`
// rows `row_stride` elements apart (64-bit; row * row_stride may exceed
// 2^31). A 0-d array is one row of one element.
struct RowsView {
  ArrayArg array;      // data: row 0; numel: rows * cols
  int64_t rows;
  int64_t cols;
  int64_t row_stride;  // elements; cols for a contiguous array
};

// CheckArray's checks except contiguity, then the layout: trailing
// `row_dims` dimensions contiguous, leading ones collapsible into one
// non-negative row stride (size-1 dimensions ignored, as torch does). A
// `written` view must not overlap itself (row_stride >= cols); a read one
// may (a broadcast row, stride 0). ValueError for any other layout.
RowsView CheckRowsArray(const char* op, const char* name, const TensorView& t, int row_dims,
                        Access access, Accept accept = Accept::kFloat);

// The bytes an array touches: `rows` runs of `row_bytes` bytes each,
// `stride_bytes` apart, from `begin`.
struct Footprint {
  uintptr_t begin;
  int64_t rows;
  int64_t row_bytes;
  int64_t stride_bytes;
};
Footprint FootprintOf(const RowsView& v);
Footprint FootprintOf(const TensorView& contiguous);  // any dtype, integers included

// Whether two footprints share no byte. Exact for rows of a common stride
// (q, k, v = qkv.split(...) are disjoint although their extents interleave);
// otherwise whether their extents are disjoint. Empty footprints never overlap.
bool Disjoint(const Footprint& a, const Footprint& b);

// `out` is `in` itself (same start, rows, stride: in-place use) or shares
// no byte with it.
void CheckSameOrDisjoint(const char* op, const char* out_name, const RowsView& out,
                         const char* in_name, const RowsView& in);

// `written` and `other` share no byte (see CheckDisjoint).
void CheckDisjoint(const char* op, const char* written_name, const Footprint& written,
                   const char* other_name, const Footprint& other);

// The checks of an elementwise op out = f(x).
UnaryArgs CheckUnary(const char* op, const TensorView& out, const TensorView& x);

}  // namespace hetkern
