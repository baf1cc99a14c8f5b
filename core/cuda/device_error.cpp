#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/device_error.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace brasa::cuda {
namespace {

std::atomic<kernels::DeviceErrorSlot*> g_host{nullptr};
kernels::DeviceErrorSlot* g_device = nullptr;
std::once_flag g_made;

}  // namespace

kernels::DeviceErrorSlot* device_error_slot() {
  std::call_once(g_made, [] {
    void* host = nullptr;
    BRASA_CUDA_CHECK("device error slot",
                     cudaHostAlloc(&host, sizeof(kernels::DeviceErrorSlot),
                                   cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(host, 0, sizeof(kernels::DeviceErrorSlot));
    void* device = nullptr;
    BRASA_CUDA_CHECK("device error slot", cudaHostGetDevicePointer(&device, host, 0));
    g_device = static_cast<kernels::DeviceErrorSlot*>(device);
    g_host.store(static_cast<kernels::DeviceErrorSlot*>(host), std::memory_order_release);
  });
  return g_device;
}

void raise_device_error() {
  kernels::DeviceErrorSlot* slot = g_host.load(std::memory_order_acquire);
  if (slot == nullptr) return;
  volatile kernels::DeviceErrorSlot* s = slot;
  if (s->flag == 0) return;
  const int code = s->code;
  const long long value = s->value, limit = s->limit;
  s->code = kernels::kNoDeviceError;
  s->flag = 0;  // the next report may land now
  if (code == kernels::kTargetOutOfBounds)
    BRASA_ERROR("nll_loss: target ", value, " is out of bounds for ", limit,
                " classes (found on the device; raised at the next synchronisation with it)");
  BRASA_ERROR("a CUDA kernel reported bad input (code ", code, ")");
}

}  // namespace brasa::cuda
