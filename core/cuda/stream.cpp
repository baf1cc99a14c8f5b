#include <brasa/cuda/device_error.h>
#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/cuda_runtime.h>
#include <brasa/cuda/stream.h>

#include <array>
#include <atomic>
#include <mutex>

namespace brasa::cuda {
namespace {

constexpr int kStreamsPerPool = 32;
constexpr int kMaxDevices = 64;

// One device's pools, created on first use.
struct StreamPools {
  std::once_flag once;
  int low_priority = 0, high_priority = 0;
  std::array<cudaStream_t, kStreamsPerPool> normal{}, high{};
  std::atomic<uint32_t> next_normal{0}, next_high{0};
};
std::array<StreamPools, kMaxDevices> g_pools;

// Per thread and device: the current stream (null: the default stream) and its priority.
struct Current {
  cudaStream_t stream = nullptr;
  int priority = 0;
};
thread_local std::array<Current, kMaxDevices> t_current;

DeviceIndex resolve(const char* op, DeviceIndex device) {
  return static_cast<DeviceIndex>(checked_device(op, device));
}

StreamPools& pools(DeviceIndex device) {
  StreamPools& p = g_pools[device];
  std::call_once(p.once, [&] {
    CUDAGuard guard(device);
    BRASA_CUDA_CHECK("getStreamFromPool",
                     cudaDeviceGetStreamPriorityRange(&p.low_priority, &p.high_priority));
    for (int i = 0; i < kStreamsPerPool; ++i) {
      BRASA_CUDA_CHECK(
          "getStreamFromPool",
          cudaStreamCreateWithPriority(&p.normal[i], cudaStreamNonBlocking, p.low_priority));
      BRASA_CUDA_CHECK(
          "getStreamFromPool",
          cudaStreamCreateWithPriority(&p.high[i], cudaStreamNonBlocking, p.high_priority));
    }
  });
  return p;
}

}  // namespace

bool CUDAStream::query() const {
  return query_ready("CUDAStream::query", cudaStreamQuery(stream_));
}

void CUDAStream::synchronize() const {
  CUDAGuard guard(device_);
  BRASA_CUDA_CHECK("CUDAStream::synchronize", cudaStreamSynchronize(stream_));
  raise_device_error();
}

std::ostream& operator<<(std::ostream& os, const CUDAStream& s) {
  return os << "stream " << s.id() << " on device cuda:" << int(s.device_index());
}

CUDAStream getDefaultCUDAStream(DeviceIndex device) {
  return CUDAStream(nullptr, resolve("getDefaultCUDAStream", device));
}

CUDAStream getStreamFromPool(bool isHighPriority, DeviceIndex device) {
  device = resolve("getStreamFromPool", device);
  StreamPools& p = pools(device);
  if (isHighPriority)
    return CUDAStream(p.high[p.next_high++ % kStreamsPerPool], device, p.high_priority);
  return CUDAStream(p.normal[p.next_normal++ % kStreamsPerPool], device, p.low_priority);
}

CUDAStream getCurrentCUDAStream(DeviceIndex device) {
  device = resolve("getCurrentCUDAStream", device);
  const Current& c = t_current[device];
  return CUDAStream(c.stream, device, c.priority);
}

void setCurrentCUDAStream(CUDAStream stream) {
  DeviceIndex d = resolve("setCurrentCUDAStream", stream.device_index());
  t_current[d] = {stream.stream(), stream.priority()};
}

DeviceIndex current_device() {
  lazy_init("current_device");
  int d = 0;
  BRASA_CUDA_CHECK("current_device", cudaGetDevice(&d));
  return static_cast<DeviceIndex>(d);
}

void set_device(DeviceIndex device) {
  device = resolve("set_device", device);
  BRASA_CUDA_CHECK("set_device", cudaSetDevice(device));
}

CUDAStreamGuard::CUDAStreamGuard(CUDAStream stream)
    : original_device_(current_device()),
      original_(getCurrentCUDAStream(stream.device_index())),
      current_(stream) {
  if (stream.device_index() != original_device_) set_device(stream.device_index());
  setCurrentCUDAStream(stream);
}

CUDAStreamGuard::~CUDAStreamGuard() {
  setCurrentCUDAStream(original_);
  if (current_.device_index() != original_device_) cudaSetDevice(original_device_);
}

CUDAGuard::CUDAGuard(DeviceIndex device) : original_(current_device()) {
  if (device >= 0 && device != original_) set_device(device);
}

CUDAGuard::CUDAGuard(Device device) : CUDAGuard(device.index()) {
  BRASA_CHECK(device.is_cuda(), "CUDAGuard: expected a CUDA device, got ", device);
}

CUDAGuard::~CUDAGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != original_) cudaSetDevice(original_);
}

}  // namespace brasa::cuda
