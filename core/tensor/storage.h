#pragma once
// Storage: the memory behind tensors, owned through a DataPtr from an Allocator.
// Everything above Storage is allocator-agnostic.
#include <brasa/tensor/device.h>
#include <brasa/util/intrusive_ptr.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace brasa {

using DeleterFn = void (*)(void* ctx);

// Where an allocation's memory comes from, which decides whether and how
// another process can map it: plain process memory (CPU heap, or memory
// handed to from_blob) cannot be shared; a memfd travels as a file
// descriptor, a named shared-memory segment by its name, CUDA memory as an
// IPC handle of its base allocation.
enum class AllocationKind : uint8_t { Plain, External, Memfd, NamedSegment, CUDA, CUDAIpc };
const char* allocation_kind_name(AllocationKind k);

// What another process needs to rebuild an allocation: the kind's own fields
// (an fd to pass over a Unix socket, a segment name, or the opaque bytes of
// an IPC handle in `name`), the offset of the data in the base allocation,
// the size and the device.
struct AllocationHandle {
  AllocationKind kind = AllocationKind::Plain;
  Device device;
  size_t nbytes = 0;
  size_t offset = 0;
  int fd = -1;
  std::string name;
};

// Owns one allocation: `ptr` is the data, `ctx` what `deleter` is called with,
// `kind` where the memory comes from.
class DataPtr {
 public:
  DataPtr() = default;
  DataPtr(void* ptr, void* ctx, DeleterFn deleter, Device device,
          AllocationKind kind = AllocationKind::Plain)
      : ptr_(ptr), ctx_(ctx), deleter_(deleter), device_(device), kind_(kind) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      clear();
      ptr_ = o.ptr_, ctx_ = o.ctx_, deleter_ = o.deleter_, device_ = o.device_, kind_ = o.kind_;
      o.ptr_ = o.ctx_ = nullptr;
      o.deleter_ = nullptr;
    }
    return *this;
  }
  ~DataPtr() { clear(); }
  void clear() {
    if (deleter_) deleter_(ctx_);
    ptr_ = ctx_ = nullptr;
    deleter_ = nullptr;
  }
  void* get() const { return ptr_; }
  void* context() const { return ctx_; }
  DeleterFn deleter() const { return deleter_; }
  Device device() const { return device_; }
  AllocationKind kind() const { return kind_; }

 private:
  void* ptr_ = nullptr;
  void* ctx_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
  AllocationKind kind_ = AllocationKind::Plain;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
  // A handle from which another process can rebuild `d` (nbytes long) with
  // import_allocation. Allocators of plain memory cannot: the default throws.
  virtual AllocationHandle export_handle(const DataPtr& d, size_t nbytes) const;
};

// Rebuilds allocations of one kind from handles; registered by the layer that
// provides the kind (multiprocessing for memfd and named segments, the CUDA
// runtime for IPC handles).
using AllocationImporter = DataPtr (*)(const AllocationHandle& h);
void register_allocation_importer(AllocationKind kind, AllocationImporter importer);
DataPtr import_allocation(const AllocationHandle& h);

// 64-byte aligned host memory; blocks of 1 MiB and more are 2 MiB aligned,
// backed by huge pages where the kernel allows, and cached for reuse.
Allocator* getCPUAllocator();
// Frees the cached large blocks (like torch.cuda.empty_cache, for host memory).
void release_cached_cpu_memory();
size_t cached_cpu_memory();

class StorageImpl : public intrusive_ptr_target {
 public:
  StorageImpl(size_t nbytes, DataPtr data, Allocator* allocator, bool resizable)
      : data_(std::move(data)), nbytes_(nbytes), allocator_(allocator), resizable_(resizable) {}
  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }
  Allocator* allocator() const { return allocator_; }
  bool resizable() const { return resizable_; }
  DataPtr& data_ptr() { return data_; }
  AllocationKind kind() const { return data_.kind(); }
  // Grows the allocation (keeping contents); only for allocator-owned storage.
  void resize(size_t nbytes);
  // Replaces the allocation.
  void set_data_ptr(DataPtr d, size_t nbytes, Allocator* allocator) {
    data_ = std::move(d);
    nbytes_ = nbytes;
    allocator_ = allocator;
  }
  // Moves the contents into a new allocation from `allocator` (on the same
  // device), in place: every tensor viewing this storage sees the new memory.
  // This is how share_memory_() moves a storage into shared memory.
  void move_to(Allocator* allocator);
  // A handle from which another process can rebuild this storage's memory
  // (Storage::from_handle); an error for memory that cannot be shared.
  AllocationHandle export_handle() const;

  // The version counter shared by every tensor viewing this storage; in-place
  // ops bump it so that autograd can detect stale saved tensors. It counts
  // this process's writes only: a storage shared with other processes has
  // one counter in each, and writes there are not seen here.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DataPtr data_;
  size_t nbytes_;
  Allocator* allocator_;
  bool resizable_;
  std::atomic<uint32_t> version_{0};
};

// The allocator of a device's runtime (device/device_runtime.h), or an error.
Allocator* device_allocator(Device device);

class Storage {
 public:
  Storage() = default;
  explicit Storage(intrusive_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}
  // nbytes from the allocator of `device`'s runtime (device/device_runtime.h).
  static Storage allocate(size_t nbytes, Device device) {
    return allocate(nbytes, device.is_cpu() ? getCPUAllocator() : device_allocator(device));
  }
  static Storage allocate(size_t nbytes, Allocator* allocator);
  // Maps memory exported by another process (or this one); not resizable.
  static Storage from_handle(const AllocationHandle& h);
  StorageImpl* get() const { return impl_.get(); }
  StorageImpl* operator->() const { return impl_.get(); }
  explicit operator bool() const { return static_cast<bool>(impl_); }
  bool is_alias_of(const Storage& o) const { return impl_ == o.impl_; }
  int32_t use_count() const { return impl_.use_count(); }

 private:
  intrusive_ptr<StorageImpl> impl_;
};

}  // namespace brasa
