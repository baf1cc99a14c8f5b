#pragma once
// The bookkeeping of CUDA tensors shared between processes, apart from CUDA
// so that it is tested without a GPU (the CUDA side is ipc_cuda.cpp).
//
// A CUDA tensor travels as the IPC handle of its whole cudaMalloc segment
// plus an offset. The producer must not free or reuse the memory while a
// consumer still uses it, and the consumer's process may be busy or dead,
// so the references are counted in shared memory: each exported block has a
// slot in a memfd of counters, +1 per send (by the producer), -1 when the
// consumer's storage is freed (by the consumer). When the producer drops the
// block while the count is not zero, the block waits in "limbo" and is freed
// by a later collect() once the count reached zero.
//
// A consumer opens each segment handle once (cudaIpcOpenMemHandle is costly
// and may be called once per handle and process) and closes it after its
// last tensor from it is freed: IpcHandleCache.
#include <brasa/tensor/storage.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace brasa::cuda {

// Where a consumer's references to one exported block are counted.
struct IpcSlot {
  int fd = -1;            // the counter file (a memfd), owned by the producer
  size_t file_bytes = 0;  // its size
  int64_t index = -1;     // the counter's index in it
};

class IpcProducer {
 public:
  static constexpr int64_t kSlotsPerFile = 1024;
  // Counts one more consumer of `key` (a block; its slot is made at the
  // first export) and keeps `keep` (the interprocess event) alive with it.
  IpcSlot add_consumer(const void* key, std::shared_ptr<void> keep = nullptr);
  bool exported(const void* key) const;
  // False until the first export: lets the allocator's free skip the lookup.
  bool any_exports() const { return any_exports_.load(std::memory_order_relaxed); }
  // The producer dropped `key`. True: free it now (no consumer holds it).
  // False: it waits in limbo and `release` runs in a later collect().
  bool producer_done(const void* key, std::function<void()> release);
  // Runs the releases of the blocks whose consumers are all done; returns
  // how many still wait.
  size_t collect();
  size_t in_limbo() const;
  int64_t consumers(const void* key) const;

 private:
  struct File {
    DataPtr memory;  // kSlotsPerFile counters in a memfd
    int64_t used = 0;
  };
  struct Export {
    std::shared_ptr<File> file;
    int64_t index = 0;
    std::vector<std::shared_ptr<void>> keep;
  };
  static std::atomic<int64_t>& counter(const Export& e);
  mutable std::mutex mu_;
  std::shared_ptr<File> current_;
  std::unordered_map<const void*, Export> exports_;
  std::vector<std::pair<Export, std::function<void()>>> limbo_;
  std::atomic<size_t> limbo_size_{0};
  std::atomic<bool> any_exports_{false};
};

// The consumer's reference: maps the producer's counter file (from the
// received descriptor, which it then owns) and decrements its slot when released.
class IpcConsumerRef {
 public:
  explicit IpcConsumerRef(const IpcSlot& slot);
  ~IpcConsumerRef();  // the decrement
  IpcConsumerRef(const IpcConsumerRef&) = delete;
  IpcConsumerRef& operator=(const IpcConsumerRef&) = delete;

 private:
  DataPtr file_;
  int64_t index_;
};

class IpcHandleCache {
 public:
  using Open = std::function<void*(const std::string& handle)>;
  using Close = std::function<void(void* base)>;
  IpcHandleCache(Open open, Close close) : open_(std::move(open)), close_(std::move(close)) {}
  // The base address of the segment behind `handle`, opened on first use.
  void* acquire(const std::string& handle);
  void release(const std::string& handle);
  size_t open_handles() const;

 private:
  struct Entry {
    void* base = nullptr;
    int users = 0;
  };
  Open open_;
  Close close_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace brasa::cuda
