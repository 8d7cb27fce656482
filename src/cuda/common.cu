#include <algorithm>
#include <atomic>

#include "src/cuda/common.cuh"

namespace hetkern {
namespace cuda {

int DeviceScope::StreamingBlocks(int64_t work_items, int threads) const {
  const int sms = Multiprocessors();
  const int64_t needed = (work_items + threads - 1) / threads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(needed, int64_t{sms} * 16)));
}

int DeviceScope::Multiprocessors() const {
  // The SM count is cached per device: launchers ask on every call.
  constexpr int kCachedDevices = 64;
  static std::atomic<int> cached_sms[kCachedDevices] = {};
  int sms = device_id_ < kCachedDevices ? cached_sms[device_id_].load(std::memory_order_relaxed) : 0;
  if (sms == 0) {
    HETKERN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_id_));
    if (device_id_ < kCachedDevices) cached_sms[device_id_].store(sms, std::memory_order_relaxed);
  }
  return sms;
}

bool DeviceScope::HasDependentLaunch() const {
  // Cached per device like the SM count: 0 unknown, 1 no, 2 yes.
  constexpr int kCachedDevices = 64;
  static std::atomic<int> cached[kCachedDevices] = {};
  int known = device_id_ < kCachedDevices ? cached[device_id_].load(std::memory_order_relaxed) : 0;
  if (known == 0) {
    int major = 0;
    HETKERN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_id_));
    known = major >= 9 ? 2 : 1;
    if (device_id_ < kCachedDevices) cached[device_id_].store(known, std::memory_order_relaxed);
  }
  return known == 2;
}

}  // namespace cuda
}  // namespace hetkern
