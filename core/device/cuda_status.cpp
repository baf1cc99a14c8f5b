#include <brasa/device/cuda_status.h>
#include <brasa/device/device_runtime.h>

namespace brasa::cuda {

int64_t device_count() {
  DeviceRuntime* rt = find_device_runtime(kCUDA);
  return rt ? rt->device_count() : 0;
}

bool is_available() { return device_count() > 0; }

// cuDNN comes with the CUDA runtime in Brasa's CUDA builds.
bool cudnn_is_available() { return is_available(); }

void manual_seed(uint64_t) {}
void manual_seed_all(uint64_t) {}

void synchronize(int64_t device) {
  DeviceRuntime* rt = find_device_runtime(kCUDA);
  if (!rt) return;
  rt->synchronize(Device(kCUDA, static_cast<int8_t>(device)));
}

}  // namespace brasa::cuda
