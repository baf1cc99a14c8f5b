#pragma once
// CUDA streams as libtorch has them (c10::cuda::CUDAStream): each device has
// its default stream and a pool of streams of normal and of high priority,
// created on first use and handed out round-robin; each thread has a
// current stream per device, which ops enqueue their work on.
#include <brasa/tensor/device.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <ostream>

namespace brasa::cuda {

using DeviceIndex = int8_t;

class CUDAStream {
 public:
  CUDAStream(cudaStream_t stream, DeviceIndex device, int priority = 0)
      : stream_(stream), device_(device), priority_(priority) {}
  cudaStream_t stream() const { return stream_; }
  operator cudaStream_t() const { return stream_; }
  DeviceIndex device_index() const { return device_; }
  Device device() const { return Device(kCUDA, device_); }
  // The value the caching allocator and events use as the stream's identity.
  int64_t id() const { return reinterpret_cast<int64_t>(stream_); }
  int priority() const { return priority_; }
  // Whether all work queued on it has completed.
  bool query() const;
  void synchronize() const;
  bool operator==(const CUDAStream& o) const {
    return stream_ == o.stream_ && device_ == o.device_;
  }
  bool operator!=(const CUDAStream& o) const { return !(*this == o); }

 private:
  cudaStream_t stream_;
  DeviceIndex device_;
  int priority_;
};

std::ostream& operator<<(std::ostream& os, const CUDAStream& s);

// -1 names the current device.
CUDAStream getDefaultCUDAStream(DeviceIndex device = -1);
CUDAStream getStreamFromPool(bool isHighPriority = false, DeviceIndex device = -1);
CUDAStream getCurrentCUDAStream(DeviceIndex device = -1);
// Makes `stream` the calling thread's current stream on its device.
void setCurrentCUDAStream(CUDAStream stream);

// The current device of the calling thread, and setting it.
DeviceIndex current_device();
void set_device(DeviceIndex device);

// Makes a stream (and its device) current for a scope.
class CUDAStreamGuard {
 public:
  explicit CUDAStreamGuard(CUDAStream stream);
  ~CUDAStreamGuard();
  CUDAStreamGuard(const CUDAStreamGuard&) = delete;
  CUDAStreamGuard& operator=(const CUDAStreamGuard&) = delete;
  CUDAStream original_stream() const { return original_; }
  CUDAStream current_stream() const { return current_; }

 private:
  DeviceIndex original_device_;
  CUDAStream original_, current_;
};

// Makes a device current for a scope (c10::cuda::CUDAGuard).
class CUDAGuard {
 public:
  explicit CUDAGuard(DeviceIndex device);
  explicit CUDAGuard(Device device);
  ~CUDAGuard();
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;
  DeviceIndex original_device() const { return original_; }

 private:
  DeviceIndex original_;
};

}  // namespace brasa::cuda
