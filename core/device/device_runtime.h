#pragma once
// The device seam: everything Brasa needs from one kind of device — its
// allocator, copies to and from it, and the stream/event/guard interface —
// behind one registry keyed by DeviceType. Ops ask the registry (and the
// per-op kernel tables of ops/kernel_table.h) instead of testing for a device
// themselves, so a new device is a folder that registers a runtime and its
// kernels. The CPU runtime is built in; its streams and events do nothing.
#include <brasa/tensor/device.h>
#include <brasa/tensor/storage.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace brasa {

// Work on a device is ordered on streams. The CPU has one stream, on which
// everything has already happened when a call returns.
struct Stream {
  Device device;
  int64_t id = 0;
};

class DeviceRuntime {
 public:
  constexpr DeviceRuntime() = default;
  virtual ~DeviceRuntime() = default;
  virtual DeviceType type() const = 0;
  virtual int device_count() const = 0;
  // Why device_count() is 0 ("" when there are devices), for error messages.
  virtual std::string no_device_reason() const { return ""; }
  virtual Allocator* allocator(Device d) = 0;
  // Copies n bytes. One side is on this runtime's device type; the other is
  // on the same type or on the CPU.
  virtual void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                          size_t n) = 0;
  // The same without waiting for the copy when the host side (`host`, the
  // CPU-side allocation) is page-locked memory of this runtime: the copy is
  // queued on the current stream (the caller synchronises before reading a
  // copy to the host). Otherwise, or by default, copy_bytes.
  virtual void copy_bytes_async(void* dst, Device dst_device, const void* src, Device src_device,
                                size_t n, const DataPtr& host) {
    (void)host;
    copy_bytes(dst, dst_device, src, src_device, n);
  }
  // Page-locked host memory for fast and asynchronous copies
  // (Tensor::pin_memory): an allocator of CPU memory, or null when this
  // runtime has none; is_pinned tells its allocations.
  virtual Allocator* pinned_allocator() { return nullptr; }
  virtual bool is_pinned(const DataPtr&) const { return false; }

  // Streams, events and the current device. The defaults are the CPU's: one
  // stream, events that are complete as soon as they are recorded.
  virtual Stream current_stream(Device d) { return {d, 0}; }
  virtual void synchronize(Device) {}
  // Makes `d` the current device and returns the one that was.
  virtual Device exchange_device(Device d) { return d; }
  virtual void* event_create() { return nullptr; }
  virtual void event_destroy(void*) {}
  virtual void event_record(void*, const Stream&) {}
  virtual void event_block(void*, const Stream&) {}  // the stream waits for the event
  virtual bool event_query(void*) { return true; }
  virtual void event_synchronize(void*) {}
};

// Registers the runtime of rt->type() (the registry does not own it; one per
// type, registering a second one for a type is an error).
void register_device_runtime(DeviceRuntime* rt);
// Removes a registered runtime (tests that register a device of their own).
void unregister_device_runtime(DeviceType type);
// The runtime of a device type, or null when this build or process has none.
DeviceRuntime* find_device_runtime(DeviceType type);
// The runtime for `d`, or a brasa::Error naming `op` and the device.
DeviceRuntime& device_runtime(const char* op, Device d);
// "cpu, cuda": the device types with a runtime, for messages.
std::string available_devices_text();
// The one capability check: throws unless `d` has a runtime here.
inline void check_device_available(const char* op, Device d) {
  if (d.type() != kCPU) device_runtime(op, d);
}

// Copies n bytes between two devices (either may be the CPU); with
// non_blocking and a pinned host side (`host`), without waiting for the copy.
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t n,
                bool non_blocking = false, const DataPtr* host = nullptr);

// A point on a stream; on the CPU always complete.
class Event {
 public:
  explicit Event(DeviceType type);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& s);
  void block(const Stream& s);
  bool query() const;
  void synchronize() const;

 private:
  DeviceRuntime* rt_;
  void* handle_ = nullptr;
};

// Makes a device current for a scope (a no-op on the CPU).
class DeviceGuard {
 public:
  explicit DeviceGuard(Device d);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  DeviceRuntime* rt_;
  Device prev_;
};

}  // namespace brasa
