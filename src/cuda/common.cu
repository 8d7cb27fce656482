#include <algorithm>

#include "src/cuda/common.cuh"

namespace hetkern {
namespace cuda {

int DeviceScope::StreamingBlocks(int64_t work_items, int threads) const {
  const int sms = Multiprocessors();
  const int64_t needed = (work_items + threads - 1) / threads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(needed, int64_t{sms} * 16)));
}

namespace {

// A device attribute, cached per device. kSlot names the attribute's cache.
template <int kSlot>
struct AttributeSlot {};

template <int kSlot>
int CachedAttribute(int device_id, cudaDeviceAttr attr) {
  return CachedPerDevice<AttributeSlot<kSlot>>(device_id, [&] {
    int value = 0;
    HETKERN_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device_id));
    return value;
  });
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
