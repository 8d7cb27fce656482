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

// `t` has a supported float dtype, lives on the CPU or (in a CUDA build) a
// CUDA device, and is contiguous.
ArrayArg CheckArray(const char* op, const char* name, const TensorView& t);

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

// The checks of an elementwise op out = f(x).
UnaryArgs CheckUnary(const char* op, const TensorView& out, const TensorView& x);

}  // namespace hetkern
