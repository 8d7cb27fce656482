// Kernel launchers of both devices and the macro that picks one.
#pragma once

#include "src/core/args.h"

namespace hetkern {
namespace cpu {
#include "src/core/kernel_decls.inc"
}  // namespace cpu

#if HETKERN_WITH_CUDA
namespace cuda {
#include "src/core/kernel_decls.inc"
}  // namespace cuda
// Runs `call` (a launcher call such as Scale(args, f)) on the device given.
// Validation has already rejected every device but CPU and CUDA.
#define HETKERN_LAUNCH(device, call) \
  ((device).device_type == kDLCUDA ? ::hetkern::cuda::call : ::hetkern::cpu::call)
#else
// CPU-only build: validation rejects CUDA tensors with a clear message.
#define HETKERN_LAUNCH(device, call) (::hetkern::cpu::call)
#endif

}  // namespace hetkern
