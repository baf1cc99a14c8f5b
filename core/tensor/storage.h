#pragma once
// Storage: the memory behind tensors, owned through a DataPtr from an Allocator.
// Everything above Storage is allocator-agnostic.
#include <brasa/tensor/device.h>
#include <brasa/util/intrusive_ptr.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace brasa {

using DeleterFn = void (*)(void* ctx);

// Owns one allocation: `ptr` is the data, `ctx` what `deleter` is called with.
class DataPtr {
 public:
  DataPtr() = default;
  DataPtr(void* ptr, void* ctx, DeleterFn deleter, Device device)
      : ptr_(ptr), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      clear();
      ptr_ = o.ptr_, ctx_ = o.ctx_, deleter_ = o.deleter_, device_ = o.device_;
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

 private:
  void* ptr_ = nullptr;
  void* ctx_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
};

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
  // Grows the allocation (keeping contents); only for allocator-owned storage.
  void resize(size_t nbytes);
  // Replaces the allocation (used to move a storage into shared memory in place).
  void set_data_ptr(DataPtr d, size_t nbytes, Allocator* allocator) {
    data_ = std::move(d);
    nbytes_ = nbytes;
    allocator_ = allocator;
  }

  // The version counter shared by every tensor viewing this storage; in-place
  // ops bump it so that autograd can detect stale saved tensors.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DataPtr data_;
  size_t nbytes_;
  Allocator* allocator_;
  bool resizable_;
  std::atomic<uint32_t> version_{0};
};

class Storage {
 public:
  Storage() = default;
  explicit Storage(intrusive_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}
  static Storage allocate(size_t nbytes, Allocator* allocator = getCPUAllocator());
  StorageImpl* get() const { return impl_.get(); }
  StorageImpl* operator->() const { return impl_.get(); }
  explicit operator bool() const { return static_cast<bool>(impl_); }
  bool is_alias_of(const Storage& o) const { return impl_ == o.impl_; }
  int32_t use_count() const { return impl_.use_count(); }

 private:
  intrusive_ptr<StorageImpl> impl_;
};

}  // namespace brasa
