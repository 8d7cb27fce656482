// Which Highway targets are compiled in, which this CPU runs, and forcing one.
#include <string>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/targets.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {

// The target HWY_DYNAMIC_DISPATCH runs now: what the kernels really use.
int64_t DispatchedTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tvm/ffi/error.h>

#include "hetkern/hetkern.h"

namespace hetkern {
namespace cpu {
namespace {

HWY_EXPORT(DispatchedTarget);

// Targets this CPU supports, read before any forcing (forcing changes what
// hwy::SupportedTargets() returns).
int64_t NativeTargets() {
  static const int64_t native = hwy::SupportedTargets();
  return native;
}

// Target bits in `mask`, best (lowest bit on x86) first.
std::vector<std::string> TargetNames(int64_t mask) {
  std::vector<std::string> names;
  for (; mask != 0; mask &= mask - 1) names.push_back(hwy::TargetName(mask & -mask));
  return names;
}

}  // namespace
}  // namespace cpu

std::string highway_version() {
  return std::to_string(HWY_MAJOR) + "." + std::to_string(HWY_MINOR) + "." + std::to_string(HWY_PATCH);
}

std::vector<std::string> compiled_cpu_targets() { return cpu::TargetNames(HWY_TARGETS); }

std::vector<std::string> available_cpu_targets() {
  return cpu::TargetNames(HWY_TARGETS & cpu::NativeTargets());
}

std::string cpu_target() {
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(cpu::DispatchedTarget)());
}

void set_cpu_target(const std::string& name) {
  const int64_t available = HWY_TARGETS & cpu::NativeTargets();
  if (name.empty() || name == "auto") {
    hwy::SetSupportedTargetsForTest(0);
  } else {
    int64_t chosen = 0;
    for (int64_t m = available; m != 0; m &= m - 1) {
      if (name == hwy::TargetName(m & -m)) chosen = m & -m;
    }
    if (chosen == 0) {
      std::string names;
      for (const std::string& n : available_cpu_targets()) names += (names.empty() ? "" : ", ") + n;
      TVM_FFI_THROW(ValueError) << "hetkern.set_cpu_target: 'name' is \"" << name
                                << "\"; expected \"auto\" or one of the targets this CPU runs: "
                                << names;
    }
    hwy::SetSupportedTargetsForTest(chosen);
  }
  // Make the next HWY_DYNAMIC_DISPATCH re-pick from the (new) supported set.
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
}

}  // namespace hetkern
#endif  // HWY_ONCE
