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

namespace {

// A device attribute, cached per device: launchers ask on every call, and
// cudaDeviceGetAttribute is a driver call. kSlot names the attribute's cache.
template <int kSlot>
int CachedAttribute(int device_id, cudaDeviceAttr attr) {
  constexpr int kCachedDevices = 64;
  static std::atomic<int> cached[kCachedDevices] = {};  // value + 1; 0: unknown
  int known = device_id < kCachedDevices ? cached[device_id].load(std::memory_order_relaxed) : 0;
  if (known == 0) {
    int value = 0;
    HETKERN_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device_id));
    known = value + 1;
    if (device_id < kCachedDevices) cached[device_id].store(known, std::memory_order_relaxed);
  }
  return known - 1;
}

}  // namespace

int DeviceScope::Multiprocessors() const {
  return CachedAttribute<0>(device_id_, cudaDevAttrMultiProcessorCount);
}

bool DeviceScope::HasDependentLaunch() const {
  return CachedAttribute<1>(device_id_, cudaDevAttrComputeCapabilityMajor) >= 9;
}

bool DeviceScope::HasCooperativeLaunch() const {
  return CachedAttribute<4>(device_id_, cudaDevAttrCooperativeLaunch) != 0;
}

int DeviceScope::SharedMemoryPerBlock() const {
  return CachedAttribute<2>(device_id_, cudaDevAttrMaxSharedMemoryPerBlockOptin);
}

int DeviceScope::SharedMemoryPerSm() const {
  return CachedAttribute<3>(device_id_, cudaDevAttrMaxSharedMemoryPerMultiprocessor);
}

}  // namespace cuda
}  // namespace hetkern
