// Argument validation shared by every op entry. Each check throws a
// tvm::ffi::Error of kind ValueError or TypeError (surfacing in Python as the
// builtin exception) whose message names the op, the argument and what was
// expected; nothing is written before all checks of an op have passed.
#pragma once

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

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

// The checks of an elementwise op out = f(x).
UnaryArgs CheckUnary(const char* op, const TensorView& out, const TensorView& x);

}  // namespace hetkern
