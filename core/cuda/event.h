#pragma once
// A CUDA event (at::cuda::CUDAEvent): created on first record, on the
// device of the stream it is first recorded on. Timing is off unless asked
// for (enable_timing), as in PyTorch; an interprocess event can be opened
// by another process from its IPC handle (and cannot time).
#include <brasa/cuda/stream.h>

#include <cuda_runtime_api.h>

namespace brasa::cuda {

class CUDAEvent {
 public:
  explicit CUDAEvent(bool enable_timing = false, bool blocking = false, bool interprocess = false);
  // Opens an event another process exported (ipc_handle()).
  CUDAEvent(DeviceIndex device, const cudaIpcEventHandle_t& handle);
  ~CUDAEvent();
  CUDAEvent(const CUDAEvent&) = delete;
  CUDAEvent& operator=(const CUDAEvent&) = delete;
  CUDAEvent(CUDAEvent&& o) noexcept;
  CUDAEvent& operator=(CUDAEvent&& o) noexcept;

  void record();  // on the current stream
  void record(const CUDAStream& stream);
  // Makes `stream` wait for the work recorded (nothing when never recorded).
  void block(const CUDAStream& stream);
  // Whether the recorded work is done (true when never recorded).
  bool query() const;
  void synchronize() const;
  // Milliseconds from this event to `end`; both recorded with timing on.
  float elapsed_time(const CUDAEvent& end) const;
  cudaIpcEventHandle_t ipc_handle();
  bool isCreated() const { return created_; }
  DeviceIndex device_index() const { return device_; }
  cudaEvent_t event() const { return event_; }

 private:
  void create(DeviceIndex device);
  unsigned flags_;
  bool created_ = false, was_recorded_ = false;
  DeviceIndex device_ = -1;
  cudaEvent_t event_ = nullptr;
};

}  // namespace brasa::cuda
