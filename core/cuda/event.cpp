#include <brasa/cuda/device_error.h>
#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/event.h>

#include <utility>

namespace brasa::cuda {

CUDAEvent::CUDAEvent(bool enable_timing, bool blocking, bool interprocess)
    : flags_((enable_timing ? cudaEventDefault : cudaEventDisableTiming) |
             (blocking ? cudaEventBlockingSync : 0u) |
             (interprocess ? cudaEventInterprocess : 0u)) {
  BRASA_CHECK(
      !(interprocess && enable_timing),
      "CUDAEvent: an interprocess event cannot record timing (enable_timing must be false)");
}

CUDAEvent::CUDAEvent(DeviceIndex device, const cudaIpcEventHandle_t& handle)
    : flags_(cudaEventDisableTiming | cudaEventInterprocess) {
  CUDAGuard guard(device);
  BRASA_CUDA_CHECK("CUDAEvent (from IPC handle)", cudaIpcOpenEventHandle(&event_, handle));
  created_ = true;
  was_recorded_ = true;  // the exporter recorded it
  device_ = device;
}

CUDAEvent::~CUDAEvent() {
  if (created_) {
    CUDAGuard guard(device_);
    cudaEventDestroy(event_);
  }
}

CUDAEvent::CUDAEvent(CUDAEvent&& o) noexcept { *this = std::move(o); }

CUDAEvent& CUDAEvent::operator=(CUDAEvent&& o) noexcept {
  if (this != &o) {
    std::swap(flags_, o.flags_);
    std::swap(created_, o.created_);
    std::swap(was_recorded_, o.was_recorded_);
    std::swap(device_, o.device_);
    std::swap(event_, o.event_);
  }
  return *this;
}

void CUDAEvent::create(DeviceIndex device) {
  CUDAGuard guard(device);
  BRASA_CUDA_CHECK("CUDAEvent", cudaEventCreateWithFlags(&event_, flags_));
  created_ = true;
  device_ = device;
}

void CUDAEvent::record() { record(getCurrentCUDAStream()); }

void CUDAEvent::record(const CUDAStream& stream) {
  if (!created_) create(stream.device_index());
  BRASA_CHECK(device_ == stream.device_index(), "CUDAEvent::record: the event was created on ",
              "device cuda:", int(device_),
              " but the stream is on cuda:", int(stream.device_index()));
  CUDAGuard guard(device_);
  BRASA_CUDA_CHECK("CUDAEvent::record", cudaEventRecord(event_, stream.stream()));
  was_recorded_ = true;
}

void CUDAEvent::block(const CUDAStream& stream) {
  if (!created_) return;
  CUDAGuard guard(stream.device_index());
  BRASA_CUDA_CHECK("CUDAEvent::block", cudaStreamWaitEvent(stream.stream(), event_, 0));
}

bool CUDAEvent::query() const {
  return !created_ || query_ready("CUDAEvent::query", cudaEventQuery(event_));
}

void CUDAEvent::synchronize() const {
  if (!created_) return;
  BRASA_CUDA_CHECK("CUDAEvent::synchronize", cudaEventSynchronize(event_));
  raise_device_error();
}

float CUDAEvent::elapsed_time(const CUDAEvent& end) const {
  BRASA_CHECK(!(flags_ & cudaEventDisableTiming) && !(end.flags_ & cudaEventDisableTiming),
              "CUDAEvent::elapsed_time: both events must be created with enable_timing=true");
  BRASA_CHECK(was_recorded_ && end.was_recorded_,
              "CUDAEvent::elapsed_time: both events must be recorded before calculating elapsed "
              "time");
  float ms = 0;
  BRASA_CUDA_CHECK("CUDAEvent::elapsed_time", cudaEventElapsedTime(&ms, event_, end.event_));
  return ms;
}

cudaIpcEventHandle_t CUDAEvent::ipc_handle() {
  BRASA_CHECK(flags_ & cudaEventInterprocess,
              "CUDAEvent::ipc_handle: the event was not created with interprocess=true");
  if (!created_) create(current_device());
  cudaIpcEventHandle_t h;
  BRASA_CUDA_CHECK("CUDAEvent::ipc_handle", cudaIpcGetEventHandle(&h, event_));
  return h;
}

}  // namespace brasa::cuda
