#include <brasa/cuda/cuda_check.h>
#include <brasa/cuda/cuda_runtime.h>
#include <brasa/cuda/pinned_memory.h>

#include <map>
#include <mutex>
#include <vector>

namespace brasa::cuda {
namespace {

struct PinnedBlock {
  void* ptr = nullptr;
  size_t size = 0;
  std::vector<cudaEvent_t> uses;  // events of the copies queued on it
};

// Requests round up to a power of two (at least 512 bytes), so that freed
// blocks fit later requests of about the same size.
size_t rounded(size_t n) {
  size_t r = 512;
  while (r < n) r *= 2;
  return r;
}

class PinnedCache final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    lazy_init("pin_memory");
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(kCPU), AllocationKind::Plain);
    const size_t size = rounded(nbytes);
    PinnedBlock* b = reuse(size);
    if (!b) {
      void* ptr = nullptr;
      BRASA_CUDA_CHECK("pin_memory", cudaHostAlloc(&ptr, size, cudaHostAllocDefault));
      b = new PinnedBlock{ptr, size, {}};
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.host_allocs;
    }
    std::lock_guard<std::mutex> lock(mu_);
    stats_.in_use_bytes += static_cast<int64_t>(b->size);
    return DataPtr(b->ptr, b, &release, Device(kCPU), AllocationKind::Plain);
  }

  static void release(void* ctx) { instance().give_back(static_cast<PinnedBlock*>(ctx)); }

  static PinnedCache& instance() {
    static PinnedCache* cache = new PinnedCache;  // never destroyed: frees run until exit
    return *cache;
  }

  void record(PinnedBlock* b, cudaStream_t stream) {
    cudaEvent_t e;
    BRASA_CUDA_CHECK("pinned memory", cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    BRASA_CUDA_CHECK("pinned memory", cudaEventRecord(e, stream));
    std::lock_guard<std::mutex> lock(mu_);
    b->uses.push_back(e);
  }

  PinnedMemoryStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    PinnedMemoryStats s = stats_;
    for (auto& [size, blocks] : free_) s.cached_blocks += static_cast<int64_t>(blocks.size());
    return s;
  }

  void empty() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, blocks] : free_)
      for (auto it = blocks.begin(); it != blocks.end();) {
        if (!done(*it)) {
          ++it;
          continue;
        }
        cudaFreeHost((*it)->ptr);
        delete *it;
        it = blocks.erase(it);
      }
  }

 private:
  // Whether the copies that used b are done (their events then released).
  static bool done(PinnedBlock* b) {
    for (auto it = b->uses.begin(); it != b->uses.end();) {
      if (cudaEventQuery(*it) == cudaErrorNotReady) return false;
      cudaGetLastError();  // a query's error is not the next launch's
      cudaEventDestroy(*it);
      it = b->uses.erase(it);
    }
    return true;
  }

  PinnedBlock* reuse(size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = free_.find(size);
    if (found == free_.end()) return nullptr;
    for (auto it = found->second.begin(); it != found->second.end(); ++it)
      if (done(*it)) {
        PinnedBlock* b = *it;
        found->second.erase(it);
        return b;
      }
    return nullptr;
  }

  void give_back(PinnedBlock* b) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.in_use_bytes -= static_cast<int64_t>(b->size);
    free_[b->size].push_back(b);
  }

  std::mutex mu_;
  std::map<size_t, std::vector<PinnedBlock*>> free_;
  PinnedMemoryStats stats_;
};

}  // namespace

Allocator& pinned_allocator() { return PinnedCache::instance(); }

bool is_pinned(const DataPtr& d) { return d.deleter() == &PinnedCache::release; }

void record_pinned_use(const DataPtr& d, cudaStream_t stream) {
  if (is_pinned(d)) PinnedCache::instance().record(static_cast<PinnedBlock*>(d.context()), stream);
}

PinnedMemoryStats pinned_memory_stats() { return PinnedCache::instance().stats(); }
void empty_pinned_cache() { PinnedCache::instance().empty(); }

}  // namespace brasa::cuda
