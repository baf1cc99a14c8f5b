#include <brasa/device/device_runtime.h>
#include <brasa/util/error.h>
#ifdef BRASA_WITH_CUDA
#include <brasa/cuda/cuda_runtime.h>
#endif

#include <atomic>
#include <cstring>

namespace brasa {
namespace {

class CPURuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override { return kCPU; }
  int device_count() const override { return 1; }
  Allocator* allocator(Device) override { return getCPUAllocator(); }
  void copy_bytes(void* dst, Device, const void* src, Device, size_t n) override {
    if (n) std::memcpy(dst, src, n);
  }
};

// Constant-initialized: no guard on the per-op path.
constinit CPURuntime g_cpu_runtime;
// Indexed by DeviceType; the CPU's is always there.
constinit std::atomic<DeviceRuntime*> g_runtimes[kNumDeviceTypes] = {&g_cpu_runtime, nullptr,
                                                                     nullptr};
#ifdef BRASA_WITH_CUDA
// CUDA builds register their runtime on first use of the registry (there is
// no static-initialisation order to rely on in a static library).
std::atomic<DeviceRuntime*>* runtimes() {
  static const bool cuda = [] {
    DeviceRuntime* expected = nullptr;
    g_runtimes[static_cast<int>(kCUDA)].compare_exchange_strong(expected, cuda::runtime());
    return true;
  }();
  (void)cuda;
  return g_runtimes;
}
#else
std::atomic<DeviceRuntime*>* runtimes() { return g_runtimes; }
#endif

int slot(DeviceType t) {
  const int i = static_cast<int>(t);
  BRASA_CHECK(i >= 0 && i < kNumDeviceTypes, "device runtime: unknown device type ", i);
  return i;
}

}  // namespace

void register_device_runtime(DeviceRuntime* rt) {
  BRASA_CHECK(rt != nullptr, "register_device_runtime: expected a runtime");
  DeviceRuntime* expected = nullptr;
  BRASA_CHECK(runtimes()[slot(rt->type())].compare_exchange_strong(expected, rt),
              "register_device_runtime: a runtime for ", device_type_name(rt->type()),
              " is already registered");
}

void unregister_device_runtime(DeviceType type) {
  BRASA_CHECK(type != kCPU, "unregister_device_runtime: the CPU runtime is built in");
  runtimes()[slot(type)].store(nullptr);
}

DeviceRuntime* find_device_runtime(DeviceType type) { return runtimes()[slot(type)].load(); }

DeviceRuntime& device_runtime(const char* op, Device d) {
  if (d.type() == kCPU) return g_cpu_runtime;  // every op asks: keep the CPU's answer cheap
  DeviceRuntime* rt = find_device_runtime(d.type());
  BRASA_CHECK(rt != nullptr, op, ": device ", d, " is not available in this build (no ",
              device_type_name(d.type()), " runtime; this build has ", available_devices_text(),
              ")");
  BRASA_CHECK(rt->device_count() > 0, op, ": device ", d, " is not available: no ",
              device_type_name(d.type()), " device is present (", rt->no_device_reason(), ")");
  BRASA_CHECK(d.index() < rt->device_count(), op, ": device ", d, " does not exist (",
              rt->device_count(), " ", device_type_name(d.type()), " device(s) present)");
  return *rt;
}

std::string available_devices_text() {
  std::string s;
  for (int i = 0; i < kNumDeviceTypes; ++i)
    if (runtimes()[i].load())
      s += (s.empty() ? "" : ", ") + std::string(device_type_name(DeviceType(i)));
  return s;
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t n,
                bool non_blocking, const DataPtr* host) {
  // The non-CPU side's runtime does the copy.
  Device d = dst_device.is_cpu() ? src_device : dst_device;
  DeviceRuntime& rt = device_runtime("copy", d);
  if (non_blocking && host && !d.is_cpu())
    rt.copy_bytes_async(dst, dst_device, src, src_device, n, *host);
  else
    rt.copy_bytes(dst, dst_device, src, src_device, n);
}

Event::Event(DeviceType type) : rt_(&device_runtime("Event", Device(type))) {
  handle_ = rt_->event_create();
}
Event::~Event() { rt_->event_destroy(handle_); }
void Event::record(const Stream& s) { rt_->event_record(handle_, s); }
void Event::block(const Stream& s) { rt_->event_block(handle_, s); }
bool Event::query() const { return rt_->event_query(handle_); }
void Event::synchronize() const { rt_->event_synchronize(handle_); }

DeviceGuard::DeviceGuard(Device d) : rt_(&device_runtime("DeviceGuard", d)) {
  prev_ = rt_->exchange_device(d);
}
DeviceGuard::~DeviceGuard() { rt_->exchange_device(prev_); }

}  // namespace brasa
