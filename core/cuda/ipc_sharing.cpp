#include <brasa/cuda/ipc_sharing.h>
#include <brasa/tensor/shared_memory.h>
#include <brasa/util/error.h>

#include <unistd.h>

namespace brasa::cuda {

std::atomic<int64_t>& IpcProducer::counter(const Export& e) {
  auto* base = static_cast<std::atomic<int64_t>*>(e.file->memory.get());
  return base[e.index];
}

IpcSlot IpcProducer::add_consumer(const void* key, std::shared_ptr<void> keep) {
  std::lock_guard<std::mutex> lock(mu_);
  any_exports_.store(true);
  auto it = exports_.find(key);
  if (it == exports_.end()) {
    if (!current_ || current_->used == kSlotsPerFile) {
      current_ = std::make_shared<File>();
      current_->memory = memfd_allocator()->allocate(kSlotsPerFile * sizeof(std::atomic<int64_t>));
    }
    Export e;
    e.file = current_;
    e.index = current_->used++;
    counter(e).store(0);
    it = exports_.emplace(key, std::move(e)).first;
  }
  Export& e = it->second;
  if (keep) e.keep.push_back(std::move(keep));
  counter(e).fetch_add(1);
  const AllocationHandle h =
      memfd_allocator()->export_handle(e.file->memory, kSlotsPerFile * sizeof(int64_t));
  return {h.fd, h.nbytes, e.index};
}

bool IpcProducer::exported(const void* key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return exports_.count(key) > 0;
}

int64_t IpcProducer::consumers(const void* key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = exports_.find(key);
  return it == exports_.end() ? 0 : counter(it->second).load();
}

bool IpcProducer::producer_done(const void* key, std::function<void()> release) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = exports_.find(key);
  if (it == exports_.end()) return true;
  Export e = std::move(it->second);
  exports_.erase(it);
  if (counter(e).load() <= 0) return true;
  limbo_.emplace_back(std::move(e), std::move(release));
  limbo_size_.store(limbo_.size());
  return false;
}

size_t IpcProducer::collect() {
  if (limbo_size_.load(std::memory_order_relaxed) == 0) return 0;  // the usual case: no lock
  std::vector<std::function<void()>> ready;
  size_t left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = limbo_.begin(); it != limbo_.end();) {
      if (counter(it->first).load() <= 0) {
        ready.push_back(std::move(it->second));
        it = limbo_.erase(it);
      } else {
        ++it;
      }
    }
    left = limbo_.size();
    limbo_size_.store(left);
  }
  for (auto& r : ready) r();  // outside the lock: a release may free memory
  return left;
}

size_t IpcProducer::in_limbo() const { return limbo_size_.load(); }

IpcConsumerRef::IpcConsumerRef(const IpcSlot& slot) : index_(slot.index) {
  const bool well_formed = slot.fd >= 0 && slot.index >= 0 &&
                           size_t(slot.index + 1) * sizeof(int64_t) <= slot.file_bytes;
  if (!well_formed && slot.fd >= 0) close(slot.fd);  // owned: not leaked on the error
  BRASA_CHECK(well_formed, "CUDA IPC: a malformed reference slot (descriptor ", slot.fd, ", index ",
              slot.index, ", file of ", slot.file_bytes, " bytes)");
  AllocationHandle h;
  h.kind = AllocationKind::Memfd;
  h.fd = slot.fd;
  h.nbytes = slot.file_bytes;
  file_ = import_allocation(h);
}

IpcConsumerRef::~IpcConsumerRef() {
  static_cast<std::atomic<int64_t>*>(file_.get())[index_].fetch_sub(1);
}

void* IpcHandleCache::acquire(const std::string& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[handle];
  if (e.users == 0) {
    try {
      e.base = open_(handle);
    } catch (...) {
      entries_.erase(handle);
      throw;
    }
  }
  ++e.users;
  return e.base;
}

void IpcHandleCache::release(const std::string& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(handle);
  if (it == entries_.end()) return;
  if (--it->second.users == 0) {
    close_(it->second.base);
    entries_.erase(it);
  }
}

size_t IpcHandleCache::open_handles() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace brasa::cuda
