#include <brasa/device/device_runtime.h>
#include <brasa/tensor/device.h>
#include <brasa/tensor/free_blocks.h>
#include <brasa/tensor/scalar.h>
#include <brasa/tensor/shared_memory.h>
#include <brasa/tensor/storage.h>
#include <brasa/tensor/tensor_options.h>
#include <brasa/util/error.h>

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace brasa {
namespace {

void free_cpu(void* p) { std::free(p); }

// Large host blocks are cached after free and handed out again: the first
// touch of fresh memory costs a page fault per page, which on this kind of
// machine takes longer than streaming the data itself. Blocks are 2 MiB
// aligned and marked for transparent huge pages. The cache holds at most
// BRASA_CPU_CACHE_MB (default 2048) megabytes.
// Medium blocks (64 KiB .. 1 MiB) are cached too, in 64 KiB steps: glibc
// would otherwise hand them back to the kernel (mmap or heap trim) and every
// reuse would fault its pages in again.
constexpr size_t kMediumBlock = size_t(64) << 10;
constexpr size_t kLargeBlock = size_t(1) << 20;
constexpr size_t kHugePage = size_t(2) << 20;

struct LargeBlock {
  void* ptr;
  size_t size;
};

class LargeBlockCache {
 public:
  LargeBlockCache() : free_(limit_from_environment()) {
    pthread_atfork(nullptr, nullptr, [] { new (&instance().mu_) std::mutex(); });
  }
  static LargeBlockCache& instance() {
    static LargeBlockCache* c =
        new LargeBlockCache();  // never destroyed: blocks may outlive statics
    return *c;
  }
  LargeBlock* take(size_t nbytes) {
    const bool huge = nbytes >= kLargeBlock;
    const size_t step = huge ? kHugePage : kMediumBlock;
    size_t size = (nbytes + step - 1) / step * step;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (LargeBlock* b = free_.take(size)) return b;
    }
    const size_t align = huge ? kHugePage : 4096;
    void* p = std::aligned_alloc(align, size);
    if (!p) {
      release_all();
      p = std::aligned_alloc(align, size);
    }
    BRASA_CHECK(p != nullptr, "CPU allocator: out of memory allocating ", nbytes, " bytes");
    if (huge) madvise(p, size, MADV_HUGEPAGE);
    return new LargeBlock{p, size};
  }
  void give_back(LargeBlock* b) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (free_.put(b->size, b)) return;
    }
    std::free(b->ptr);
    delete b;
  }
  void release_all() {
    std::vector<LargeBlock*> drop;
    {
      std::lock_guard<std::mutex> g(mu_);
      drop = free_.take_all();
    }
    for (LargeBlock* b : drop) {
      std::free(b->ptr);
      delete b;
    }
  }
  size_t cached_bytes() {
    std::lock_guard<std::mutex> g(mu_);
    return free_.bytes();
  }

 private:
  static size_t limit_from_environment() {
    const char* env = std::getenv("BRASA_CPU_CACHE_MB");
    return (env ? std::strtoull(env, nullptr, 10) : 2048) << 20;
  }
  std::mutex mu_;
  detail::FreeBlocks<LargeBlock> free_;
};

void free_large(void* ctx) { LargeBlockCache::instance().give_back(static_cast<LargeBlock*>(ctx)); }

// Allocations of at least this many bytes are born shareable (memfd), so
// that share_memory_() on them moves nothing; 0: none (the default).
std::atomic<size_t> g_shareable_from{[] {
  const char* env = std::getenv("BRASA_SHAREABLE_CPU_MB");
  return env ? static_cast<size_t>(std::strtoull(env, nullptr, 10)) << 20 : size_t{0};
}()};

class CPUAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(kCPU));
    const size_t shareable_from = g_shareable_from.load(std::memory_order_relaxed);
    if (shareable_from > 0 && nbytes >= shareable_from) return memfd_allocator()->allocate(nbytes);
    if (nbytes >= kMediumBlock) {
      LargeBlock* b = LargeBlockCache::instance().take(nbytes);
      return DataPtr(b->ptr, b, free_large, Device(kCPU));
    }
    size_t rounded = (nbytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    BRASA_CHECK(p != nullptr, "CPU allocator: out of memory allocating ", nbytes, " bytes");
    return DataPtr(p, p, free_cpu, Device(kCPU));
  }
  AllocationHandle export_handle(const DataPtr& d, size_t nbytes) const override {
    if (d.kind() == AllocationKind::Memfd) return memfd_allocator()->export_handle(d, nbytes);
    return Allocator::export_handle(d, nbytes);
  }
};

std::atomic<ScalarType> g_default_dtype{kFloat};

}  // namespace

void set_shareable_cpu_allocations(size_t min_bytes) {
  g_shareable_from.store(min_bytes, std::memory_order_relaxed);
}
size_t shareable_cpu_allocations() { return g_shareable_from.load(std::memory_order_relaxed); }

void release_cached_cpu_memory() { LargeBlockCache::instance().release_all(); }
size_t cached_cpu_memory() { return LargeBlockCache::instance().cached_bytes(); }

Allocator* getCPUAllocator() {
  static CPUAllocator a;
  return &a;
}

Storage Storage::allocate(size_t nbytes, Allocator* allocator) {
  return Storage(make_intrusive<StorageImpl>(nbytes, allocator->allocate(nbytes), allocator, true));
}

Allocator* device_allocator(Device device) {
  return device_runtime("allocate", device).allocator(device);
}

const char* allocation_kind_name(AllocationKind k) {
  switch (k) {
    case AllocationKind::Plain:
      return "plain";
    case AllocationKind::External:
      return "external";
    case AllocationKind::Memfd:
      return "memfd";
    case AllocationKind::NamedSegment:
      return "named segment";
    case AllocationKind::CUDA:
      return "cuda";
    case AllocationKind::CUDAIpc:
      return "cuda ipc";
  }
  return "unknown";
}

AllocationHandle Allocator::export_handle(const DataPtr& d, size_t) const {
  BRASA_ERROR("export_handle: ", allocation_kind_name(d.kind()), " memory on ", d.device(),
              " cannot be shared with another process (move it to shared memory first, e.g. "
              "share_memory_())");
}

namespace {
constexpr int kNumAllocationKinds = 6;
std::atomic<AllocationImporter> g_importers[kNumAllocationKinds];
}  // namespace

void register_allocation_importer(AllocationKind kind, AllocationImporter importer) {
  g_importers[static_cast<int>(kind)].store(importer);
}

DataPtr import_allocation(const AllocationHandle& h) {
  AllocationImporter f = g_importers[static_cast<int>(h.kind)].load();
  BRASA_CHECK(f != nullptr, "import_allocation: no importer for ", allocation_kind_name(h.kind),
              " allocations is registered in this process (", h.nbytes, " bytes on ", h.device,
              ")");
  return f(h);
}

Storage Storage::from_handle(const AllocationHandle& h) {
  // Imported shared memory can be passed on again (its allocator exports it).
  Allocator* exporter = h.kind == AllocationKind::Memfd ? memfd_allocator() : nullptr;
  return Storage(make_intrusive<StorageImpl>(h.nbytes, import_allocation(h), exporter, false));
}

void StorageImpl::move_to(Allocator* allocator) {
  BRASA_CHECK(allocator != nullptr, "move_to: expected an allocator");
  DataPtr nd = allocator->allocate(nbytes_);
  BRASA_CHECK(nd.device() == device() || nbytes_ == 0, "move_to: the allocator gives memory on ",
              nd.device(), " but the storage is on ", device());
  if (nbytes_ > 0) copy_bytes(nd.get(), nd.device(), data_.get(), device(), nbytes_);
  set_data_ptr(std::move(nd), nbytes_, allocator);
}

AllocationHandle StorageImpl::export_handle() const {
  if (!allocator_)
    BRASA_ERROR("export_handle: ", allocation_kind_name(kind()), " memory on ", device(),
                " (from_blob or imported) cannot be exported");
  return allocator_->export_handle(data_, nbytes_);
}

void StorageImpl::resize(size_t nbytes) {
  BRASA_CHECK(resizable_ && allocator_,
              "resize: storage is not resizable (from_blob or foreign memory)");
  if (nbytes <= nbytes_) return;
  DataPtr nd = allocator_->allocate(nbytes);
  // Device memory is not host-addressable: its runtime moves the old bytes.
  if (nbytes_ > 0 && device().is_cpu())
    std::memcpy(nd.get(), data_.get(), nbytes_);
  else if (nbytes_ > 0)
    copy_bytes(nd.get(), nd.device(), data_.get(), device(), nbytes_);
  data_ = std::move(nd);
  nbytes_ = nbytes;
}

Device::Device(const std::string& spec) : type_(kCPU), index_(-1) {
  std::string kind = spec, idx;
  auto colon = spec.find(':');
  if (colon != std::string::npos) kind = spec.substr(0, colon), idx = spec.substr(colon + 1);
  if (kind == "cpu")
    type_ = kCPU;
  else if (kind == "cuda")
    type_ = kCUDA;
  else if (kind == "privateuseone")
    type_ = kPrivateUse1;
  else
    BRASA_ERROR("Device: expected a device string like 'cpu', 'cuda' or 'cuda:1', got '", spec,
                "'");
  if (!idx.empty()) {
    BRASA_CHECK(idx.find_first_not_of("0123456789") == std::string::npos && idx.size() < 4,
                "Device: invalid device index in '", spec, "'");
    index_ = static_cast<int8_t>(std::stoi(idx));
  }
}

const char* device_type_name(DeviceType t) {
  switch (t) {
    case kCPU:
      return "cpu";
    case kCUDA:
      return "cuda";
    case kPrivateUse1:
      return "privateuseone";
  }
  return "unknown";
}

std::string Device::str() const {
  std::string s = device_type_name(type_);
  if (index_ >= 0) {
    s += ':';
    s += std::to_string(index_);
  }
  return s;
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.isFloatingPoint()) return os << s.toDouble();
  if (s.isBoolean()) return os << (s.toBool() ? "true" : "false");
  return os << s.toLong();
}

ScalarType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }
void set_default_dtype(ScalarType t) {
  BRASA_CHECK(isFloatingType(t), "set_default_dtype: expected a floating dtype, got ", t);
  g_default_dtype.store(t);
}

}  // namespace brasa
