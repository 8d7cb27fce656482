// Build information and CPU target control, for C++ callers and (exported
// through TVM-FFI) for `python -m hetkern`.
#include <tvm/ffi/extra/stl.h>
#include <tvm/ffi/function.h>

#include <sstream>

#include "hetkern/hetkern.h"

namespace hetkern {

std::string version() { return HETKERN_VERSION; }

bool built_with_cuda() { return HETKERN_WITH_CUDA; }

std::vector<std::string> cuda_archs() {
  std::vector<std::string> archs;
  std::istringstream list(HETKERN_CUDA_ARCHS);
  for (std::string arch; std::getline(list, arch, ',');) {
    if (!arch.empty()) archs.push_back(arch);
  }
  return archs;
}

}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(version, hetkern::version);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(built_with_cuda, hetkern::built_with_cuda);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(cuda_archs, hetkern::cuda_archs);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(highway_version, hetkern::highway_version);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(compiled_cpu_targets, hetkern::compiled_cpu_targets);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(available_cpu_targets, hetkern::available_cpu_targets);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(cpu_target, hetkern::cpu_target);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(set_cpu_target, hetkern::set_cpu_target);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(num_threads, hetkern::num_threads);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(set_num_threads, hetkern::set_num_threads);
