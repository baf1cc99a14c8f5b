#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/cuda_runtime.h>
#include <brasa/cuda/device_error.h>
#include <brasa/cuda/event.h>
#include <brasa/cuda/ipc_cuda.h>
#include <brasa/cuda/memory.h>
#include <brasa/cuda/pinned_memory.h>
#include <brasa/cuda/stream.h>
#include <brasa/device/device_runtime.h>

#include <pthread.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace brasa::cuda {
namespace {

struct DeviceQuery {
  int count = 0;
  std::string reason;
};

std::atomic<bool> g_initialized{false};
std::atomic<bool> g_forked_after_init{false};

void on_fork_child() {
  if (g_initialized.load()) g_forked_after_init.store(true);
}

const DeviceQuery& devices() {
  static const DeviceQuery q = [] {
    pthread_atfork(nullptr, nullptr, on_fork_child);
    DeviceQuery r;
    cudaError_t err = cudaGetDeviceCount(&r.count);
    if (err != cudaSuccess) {
      cudaGetLastError();
      r.count = 0;
      r.reason = detail::str("cudaGetDeviceCount: ", cudaGetErrorString(err));
    } else if (r.count == 0) {
      r.reason = "the driver reports no CUDA device";
    }
    return r;
  }();
  return q;
}

// The driver's memory behind the caching allocator.
class DriverMemory final : public RawMemory {
 public:
  void* malloc(int device, size_t bytes) override {
    CUDAGuard guard(static_cast<DeviceIndex>(device));
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    BRASA_CUDA_CHECK("CUDA caching allocator", err);
    return p;
  }
  void free(int device, void* ptr) override {
    CUDAGuard guard(static_cast<DeviceIndex>(device));
    BRASA_CUDA_CHECK("CUDA caching allocator", cudaFree(ptr));
  }
  void mem_info(int device, size_t* free_bytes, size_t* total_bytes) override {
    CUDAGuard guard(static_cast<DeviceIndex>(device));
    BRASA_CUDA_CHECK("CUDA caching allocator", cudaMemGetInfo(free_bytes, total_bytes));
  }
  void* record_event(int device, StreamId stream) override {
    CUDAGuard guard(static_cast<DeviceIndex>(device));
    cudaEvent_t e;
    BRASA_CUDA_CHECK("CUDA caching allocator",
                     cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    BRASA_CUDA_CHECK("CUDA caching allocator",
                     cudaEventRecord(e, reinterpret_cast<cudaStream_t>(stream)));
    return e;
  }
  bool event_done(void* event) override {
    return query_ready("CUDA caching allocator", cudaEventQuery(static_cast<cudaEvent_t>(event)));
  }
  void event_wait(void* event) override {
    BRASA_CUDA_CHECK("CUDA caching allocator",
                     cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }
  void event_release(void* event) override { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }
};

// A block another process may still use (it was sent by IPC) waits in limbo
// until those consumers released it.
void free_block(void* ctx) {
  Block* b = static_cast<Block*>(ctx);
  if (ipc_producer().any_exports() &&
      !ipc_producer().producer_done(b, [b] { caching_allocator().free(b); }))
    return;
  caching_allocator().free(b);
}

// One per device index; -1 (the slot past the end) allocates on the current device.
class CUDAAllocator final : public Allocator {
 public:
  void set_device(int d) { device_ = d; }
  DataPtr allocate(size_t nbytes) override {
    lazy_init("allocate");
    ipc_producer().collect();  // blocks whose consumers are done
    const DeviceIndex d = device_ >= 0 ? static_cast<DeviceIndex>(device_) : current_device();
    if (nbytes == 0)
      return DataPtr(nullptr, nullptr, nullptr, Device(kCUDA, d), AllocationKind::CUDA);
    Block* b = caching_allocator().malloc(d, nbytes, getCurrentCUDAStream(d).id());
    return DataPtr(b->ptr, b, &free_block, Device(kCUDA, d), AllocationKind::CUDA);
  }
  AllocationHandle export_handle(const DataPtr& d, size_t nbytes) const override {
    return export_ipc_handle(d, nbytes);
  }

 private:
  int device_ = -1;
};

class CUDARuntime final : public DeviceRuntime {
 public:
  CUDARuntime() {
    for (int i = 0; i < CachingAllocatorCore::kMaxDevices; ++i) allocators_[i].set_device(i);
  }
  DeviceType type() const override { return kCUDA; }
  int device_count() const override { return devices().count; }
  std::string no_device_reason() const override { return devices().reason; }
  Allocator* allocator(Device d) override {
    return d.has_index() ? &allocators_[d.index()] : &current_;
  }
  void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                  size_t n) override {
    if (n == 0) return;
    const Device d = dst_device.is_cuda() ? dst_device : src_device;
    lazy_init("copy");
    CUDAGuard guard(d);
    cudaStream_t s = getCurrentCUDAStream().stream();
    BRASA_CUDA_CHECK("copy", cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
    BRASA_CUDA_CHECK("copy", cudaStreamSynchronize(s));
    raise_device_error();
  }
  void copy_bytes_async(void* dst, Device dst_device, const void* src, Device src_device, size_t n,
                        const DataPtr& host) override {
    if (n == 0) return;
    if (!cuda::is_pinned(host)) return copy_bytes(dst, dst_device, src, src_device, n);
    const Device d = dst_device.is_cuda() ? dst_device : src_device;
    lazy_init("copy");
    CUDAGuard guard(d);
    cudaStream_t s = getCurrentCUDAStream().stream();
    BRASA_CUDA_CHECK("copy", cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
    record_pinned_use(host, s);  // the block is not reused before the copy is done
  }
  Allocator* pinned_allocator() override { return &cuda::pinned_allocator(); }
  bool is_pinned(const DataPtr& d) const override { return cuda::is_pinned(d); }
  Stream current_stream(Device d) override { return {d, getCurrentCUDAStream(d.index()).id()}; }
  void synchronize(Device d) override {
    lazy_init("synchronize");
    CUDAGuard guard(d.index());
    BRASA_CUDA_CHECK("synchronize", cudaDeviceSynchronize());
    raise_device_error();
  }
  Device exchange_device(Device d) override {
    const DeviceIndex prev = current_device();
    if (d.has_index() && d.index() != prev) set_device(d.index());
    return Device(kCUDA, prev);
  }
  void* event_create() override { return new CUDAEvent(); }
  void event_destroy(void* e) override { delete static_cast<CUDAEvent*>(e); }
  void event_record(void* e, const Stream& s) override {
    static_cast<CUDAEvent*>(e)->record(as_cuda(s));
  }
  void event_block(void* e, const Stream& s) override {
    static_cast<CUDAEvent*>(e)->block(as_cuda(s));
  }
  bool event_query(void* e) override { return static_cast<CUDAEvent*>(e)->query(); }
  void event_synchronize(void* e) override { static_cast<CUDAEvent*>(e)->synchronize(); }

 private:
  static CUDAStream as_cuda(const Stream& s) {
    const DeviceIndex d = s.device.has_index() ? s.device.index() : current_device();
    return CUDAStream(reinterpret_cast<cudaStream_t>(s.id), d);
  }
  std::array<CUDAAllocator, CachingAllocatorCore::kMaxDevices> allocators_;
  CUDAAllocator current_;
};

}  // namespace

int device_count_or_zero() { return devices().count; }
const std::string& no_device_reason() { return devices().reason; }

void lazy_init(const char* op) {
  BRASA_CHECK(!g_forked_after_init.load(), op,
              ": cannot re-initialize CUDA in a forked subprocess (CUDA was initialized in the "
              "parent before fork). To use CUDA with multiprocessing, use the spawn start method "
              "(multiprocessing::ProcessOptions().start_method(\"spawn\"))");
  if (g_initialized.load(std::memory_order_acquire)) return;
  BRASA_CHECK(devices().count > 0, op, ": no CUDA device is available (", devices().reason, ")");
  g_initialized.store(true, std::memory_order_release);
}

int checked_device(const char* op, int device) {
  lazy_init(op);
  if (device < 0) return current_device();
  BRASA_CHECK(device < device_count_or_zero(), op, ": CUDA device ", device, " does not exist (",
              device_count_or_zero(), " device(s) present)");
  return device;
}

DeviceRuntime* runtime() {
  static CUDARuntime rt;
  return &rt;
}

CachingAllocatorCore& caching_allocator() {
  // Never destroyed: blocks may be freed by static destructors after main.
  static CachingAllocatorCore* a = [] {
    const char* v = std::getenv("BRASA_NO_CUDA_MEMORY_CACHING");
    const bool caching = !(v && std::strcmp(v, "1") == 0);
    return new CachingAllocatorCore(new DriverMemory, caching);
  }();
  return *a;
}

Block* block_of(const DataPtr& data) {
  return data.deleter() == &free_block ? static_cast<Block*>(data.context()) : nullptr;
}

void record_stream(const DataPtr& data, int64_t stream_id) {
  if (Block* b = block_of(data)) caching_allocator().record_stream(b, stream_id);
}

int64_t memory_allocated(int device) {
  return caching_allocator()
      .stats(checked_device("memory_allocated", device))
      .allocated_bytes.current;
}
int64_t max_memory_allocated(int device) {
  return caching_allocator()
      .stats(checked_device("max_memory_allocated", device))
      .allocated_bytes.peak;
}
int64_t memory_reserved(int device) {
  return caching_allocator()
      .stats(checked_device("memory_reserved", device))
      .reserved_bytes.current;
}
int64_t max_memory_reserved(int device) {
  return caching_allocator()
      .stats(checked_device("max_memory_reserved", device))
      .reserved_bytes.peak;
}

std::map<std::string, int64_t> memory_stats(int device) {
  const DeviceStats s = caching_allocator().stats(checked_device("memory_stats", device));
  std::map<std::string, int64_t> out;
  auto put = [&](const char* name, const Stat& st) {
    const std::string k = std::string(name) + ".all.";
    out[k + "current"] = st.current;
    out[k + "peak"] = st.peak;
    out[k + "allocated"] = st.allocated;
    out[k + "freed"] = st.freed;
  };
  put("allocation", s.allocation);
  put("segment", s.segment);
  put("active", s.active);
  put("allocated_bytes", s.allocated_bytes);
  put("reserved_bytes", s.reserved_bytes);
  put("active_bytes", s.active_bytes);
  put("requested_bytes", s.requested_bytes);
  out["num_alloc_retries"] = s.num_alloc_retries;
  out["num_ooms"] = s.num_ooms;
  out["num_device_alloc"] = s.num_device_alloc;
  out["num_device_free"] = s.num_device_free;
  return out;
}

void reset_peak_memory_stats(int device) {
  caching_allocator().reset_peak_stats(checked_device("reset_peak_memory_stats", device));
}
void reset_accumulated_memory_stats(int device) {
  caching_allocator().reset_accumulated_stats(
      checked_device("reset_accumulated_memory_stats", device));
}
void empty_cache() {
  if (!g_initialized.load()) return;  // nothing was ever allocated
  ipc_producer().collect();
  caching_allocator().empty_cache();
}
size_t ipc_collect() { return ipc_producer().collect(); }
void set_per_process_memory_fraction(double fraction, int device) {
  caching_allocator().set_memory_fraction(
      fraction, checked_device("set_per_process_memory_fraction", device));
}
std::pair<size_t, size_t> mem_get_info(int device) {
  CUDAGuard guard(static_cast<DeviceIndex>(checked_device("mem_get_info", device)));
  size_t free_bytes = 0, total_bytes = 0;
  BRASA_CUDA_CHECK("mem_get_info", cudaMemGetInfo(&free_bytes, &total_bytes));
  return {free_bytes, total_bytes};
}

}  // namespace brasa::cuda
