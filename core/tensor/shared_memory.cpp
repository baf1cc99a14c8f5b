#include <brasa/tensor/free_blocks.h>
#include <brasa/tensor/shared_memory.h>
#include <brasa/tensor/tensor.h>
#include <brasa/util/parallel.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

namespace brasa {

namespace {

// One memfd mapping: what the DataPtr's deleter releases.
struct MemfdBlock {
  int fd;
  void* ptr;
  size_t nbytes;  // the mapping's length (the memfd's size)
  void (*on_release)(void*) = nullptr;
  void* release_arg = nullptr;
  // Made by this process (not received), with the fork count then, and
  // whether its descriptor was ever handed out: see SharedBlockPool.
  bool made_here = false;
  bool exported = false;
  uint64_t fork_epoch = 0;
};

void unmap_and_close(MemfdBlock* b) {
  if (b->ptr) munmap(b->ptr, b->nbytes);
  if (b->fd >= 0) close(b->fd);
  delete b;
}

// Shared blocks this process made, and that no other process can have
// mapped, are kept after free and handed out again, as the host allocator
// keeps its large blocks (storage.cpp): making shared pages costs the kernel
// ~0.6 ms per MiB on this kind of machine (the same for torch), a reuse only
// the copy. A block whose descriptor was exported, or that existed when the
// process forked (the child maps it too), is never kept. Sizes are rounded
// (64 KiB steps below 2 MiB, 2 MiB steps above) and a block serves requests
// down to 4/5 of its size. At most BRASA_SHM_CACHE_MB (default 512) MiB and
// kMaxBlocks blocks (each holds a descriptor).
class SharedBlockPool {
 public:
  static constexpr size_t kMaxBlocks = 128;
  static SharedBlockPool& instance() {
    static SharedBlockPool* p =
        new SharedBlockPool();  // never destroyed: blocks may outlive statics
    return *p;
  }
  static size_t rounded(size_t nbytes) {
    const size_t step = nbytes < (size_t{2} << 20) ? size_t{64} << 10 : size_t{2} << 20;
    return (nbytes + step - 1) / step * step;
  }
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  // A pooled block for `nbytes`, or null. (The epoch is read under the
  // lock, which a fork takes too: a fork after this makes the block
  // unreusable, one before it dropped the block from the child.)
  MemfdBlock* take(size_t nbytes) {
    std::lock_guard<std::mutex> g(mu_);
    MemfdBlock* b = free_.take(rounded(nbytes));
    if (b) b->fork_epoch = epoch();
    return b;
  }
  // Keeps `b` if it may be reused and there is room; false: the caller frees it.
  bool keep(MemfdBlock* b) {
    if (!b->made_here || b->exported || b->on_release || b->nbytes == 0) return false;
    std::lock_guard<std::mutex> g(mu_);
    return b->fork_epoch == epoch() && free_.put(b->nbytes, b);
  }
  void release_all() {
    std::vector<MemfdBlock*> drop;
    {
      std::lock_guard<std::mutex> g(mu_);
      drop = free_.take_all();
    }
    for (MemfdBlock* b : drop) unmap_and_close(b);
  }
  size_t cached_bytes() {
    std::lock_guard<std::mutex> g(mu_);
    return free_.bytes();
  }

 private:
  static size_t limit_from_environment() {
    const char* env = std::getenv("BRASA_SHM_CACHE_MB");
    return (env ? std::strtoull(env, nullptr, 10) : 512) << 20;
  }
  SharedBlockPool() : free_(limit_from_environment(), kMaxBlocks) {
    // Across a fork the lock is held, so that the child gets the pool in a
    // consistent state; both sides then start a new epoch, and the child
    // drops its copies of the free blocks (the parent may hand them out).
    pthread_atfork([] { instance().mu_.lock(); },
                   [] {
                     instance().epoch_.fetch_add(1);
                     instance().mu_.unlock();
                   },
                   [] {
                     SharedBlockPool& p = instance();
                     p.epoch_.fetch_add(1);
                     for (MemfdBlock* b : p.free_.take_all()) unmap_and_close(b);
                     p.mu_.unlock();
                   });
  }
  std::mutex mu_;
  detail::FreeBlocks<MemfdBlock> free_;
  std::atomic<uint64_t> epoch_{0};
};

void free_memfd(void* ctx) {
  auto* b = static_cast<MemfdBlock*>(ctx);
  if (b->on_release) b->on_release(b->release_arg);
  if (SharedBlockPool::instance().keep(b)) return;
  unmap_and_close(b);
}

std::string open_files_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return "unknown";
  return std::to_string(r.rlim_cur);
}

// Maps `fd` (owned by the result) as `nbytes` of shared memory.
DataPtr map_memfd(int fd, size_t nbytes, const char* what) {
  void* p = nullptr;
  if (nbytes > 0) {
    p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      close(fd);
      BRASA_ERROR(what, ": cannot map ", nbytes, " bytes of shared memory: ", std::strerror(err));
    }
  }
  return DataPtr(p, new MemfdBlock{fd, p, nbytes}, free_memfd, Device(kCPU), AllocationKind::Memfd);
}

// A number read from a file, or -1 (absent, or "max").
int64_t read_number(const std::string& path) {
  std::ifstream in(path);
  std::string v;
  if (!(in >> v) || v.empty() || v == "max" || !std::isdigit(static_cast<unsigned char>(v[0])))
    return -1;
  return std::stoll(v);
}

// The memory this process may still take, from the memory cgroups it is in
// (v1 and v2, every level of the path) and the machine's MemAvailable; -1
// when nothing says. Shared memory beyond it would get the process killed by
// the OOM killer inside fallocate (the kernel does not return ENOMEM there),
// so it is refused up front.
int64_t memory_headroom() {
  int64_t room = -1;
  auto consider = [&](int64_t limit, int64_t used) {
    // v1 reports "no limit" as a huge number.
    if (limit < 0 || used < 0 || limit >= (int64_t{1} << 60)) return;
    const int64_t left = std::max<int64_t>(0, limit - used);
    room = room < 0 ? left : std::min(room, left);
  };
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    const bool v1 = controllers == "memory", v2 = controllers.empty();
    if (!v1 && !v2) continue;
    for (;;) {
      if (v1) {
        const std::string dir = "/sys/fs/cgroup/memory" + path;
        consider(read_number(dir + "/memory.limit_in_bytes"),
                 read_number(dir + "/memory.usage_in_bytes"));
      } else {
        for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
          const std::string dir = root + path;
          consider(read_number(dir + "/memory.max"), read_number(dir + "/memory.current"));
        }
      }
      if (path.empty() || path == "/") break;
      const auto slash = path.rfind('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb;
  while (meminfo >> key >> kb) {
    if (key == "MemAvailable:") consider(kb * 1024, 0);
    meminfo.ignore(64, '\n');
  }
  return room;
}

}  // namespace

void check_shared_memory_room(size_t nbytes) {
  if (nbytes < (size_t{1} << 20)) return;  // reading the limits costs more than small blocks
  const int64_t room = memory_headroom();
  BRASA_CHECK(room < 0 || static_cast<int64_t>(nbytes) <= room, "share_memory_: cannot reserve ",
              nbytes, " bytes of shared memory: only ", room,
              " bytes are available to this process (memory cgroup limit or MemAvailable); "
              "shared memory cannot be swapped out or reclaimed");
}

namespace {

// Whether madvise(MADV_POPULATE_WRITE) works here (Linux 5.14 and later).
std::atomic<bool> g_populate_write{true};

// Allocates and maps the pages of `d` (a fresh memfd mapping of `nbytes`)
// and, with `src`, copies its first src_bytes into them — in chunks on the op thread pool:
// on virtual machines building the page tables costs more than the copy,
// and it parallelizes. MADV_POPULATE_WRITE reports a shortage as an error
// where a touch would be a SIGBUS; without it, fallocate reserves the pages.
void fill_memfd(const DataPtr& d, size_t nbytes, size_t src_bytes, const void* src) {
  auto* block = static_cast<MemfdBlock*>(d.context());
  char* p = static_cast<char*>(d.get());
  constexpr int64_t kChunk = int64_t{8} << 20;
  const int64_t chunks = (static_cast<int64_t>(nbytes) + kChunk - 1) / kChunk;
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const size_t at = static_cast<size_t>(c * kChunk);
      const size_t len = std::min(nbytes - at, static_cast<size_t>(kChunk));
      int err = 0;
      if (g_populate_write.load(std::memory_order_relaxed)) {
        if (madvise(p + at, len, MADV_POPULATE_WRITE) != 0) {
          err = errno;
          if (err == EINVAL) g_populate_write.store(false);
        }
      }
      if (!g_populate_write.load(std::memory_order_relaxed))
        err = fallocate(block->fd, 0, static_cast<off_t>(at), static_cast<off_t>(len)) == 0 ? 0
                                                                                            : errno;
      if (err != 0) {
        BRASA_CHECK(err != ENOSPC && err != ENOMEM && err != EFAULT,
                    "share_memory_: cannot reserve ", nbytes, " bytes of shared memory (",
                    std::strerror(err),
                    "): the shared-memory limit (tmpfs size or memory cgroup) is reached");
        BRASA_ERROR("share_memory_: cannot reserve ", nbytes,
                    " bytes of shared memory: ", std::strerror(err));
      }
      if (src && at < src_bytes)
        std::memcpy(p + at, static_cast<const char*>(src) + at, std::min(len, src_bytes - at));
    }
  });
}

// dst <- src (n bytes), in chunks on the op thread pool.
void parallel_copy(char* dst, const char* src, size_t n) {
  constexpr int64_t kChunk = int64_t{8} << 20;
  const int64_t chunks = (static_cast<int64_t>(n) + kChunk - 1) / kChunk;
  parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const size_t at = static_cast<size_t>(c * kChunk);
      std::memcpy(dst + at, src + at, std::min(n - at, static_cast<size_t>(kChunk)));
    }
  });
}

// Shared memory of `nbytes` (or more), mapped, with src copied in when
// given: a block from the pool, or a fresh memfd (see fill_memfd).
DataPtr make_memfd(size_t nbytes, const void* src) {
  SharedBlockPool& pool = SharedBlockPool::instance();
  if (MemfdBlock* b = pool.take(nbytes)) {
    DataPtr d(b->ptr, b, free_memfd, Device(kCPU), AllocationKind::Memfd);
    if (src) parallel_copy(static_cast<char*>(b->ptr), static_cast<const char*>(src), nbytes);
    return d;
  }
  const size_t size = nbytes > 0 ? SharedBlockPool::rounded(nbytes) : 0;
  const uint64_t epoch = pool.epoch();  // before the mapping exists: a fork from here on shares it
  check_shared_memory_room(size);
  int fd = memfd_create("brasa-shared", MFD_CLOEXEC);
  if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
    pool.release_all();  // the pool's descriptors, before giving up
    fd = memfd_create("brasa-shared", MFD_CLOEXEC);
  }
  if (fd < 0) {
    const int err = errno;
    BRASA_CHECK(err != EMFILE && err != ENFILE, "share_memory_: out of file descriptors (",
                std::strerror(err),
                "): every shared storage keeps one open and this process may have ",
                open_files_limit(),
                " (ulimit -n); raise the limit, share fewer, larger storages, or "
                "use the file_system sharing strategy (multiprocessing::set_sharing_strategy)");
    BRASA_ERROR("share_memory_: memfd_create failed: ", std::strerror(err));
  }
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    close(fd);
    BRASA_ERROR("share_memory_: cannot size shared memory to ", size,
                " bytes: ", std::strerror(err));
  }
  DataPtr d = map_memfd(fd, size, "share_memory_");
  fill_memfd(d, size, nbytes, src);  // on error, `d` unmaps and closes
  auto* block = static_cast<MemfdBlock*>(d.context());
  block->made_here = true;
  block->fork_epoch = epoch;
  return d;
}

class MemfdAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override { return make_memfd(nbytes, nullptr); }

  AllocationHandle export_handle(const DataPtr& d, size_t nbytes) const override {
    AllocationHandle h;
    h.kind = AllocationKind::Memfd;
    h.device = Device(kCPU);
    h.nbytes = nbytes;
    auto* block = static_cast<MemfdBlock*>(d.context());
    block->exported = true;  // another process may map it: never reused (SharedBlockPool)
    h.fd = block->fd;
    return h;
  }
};

// The receiving side: the handle's descriptor (received over a socket, owned
// by the new allocation from now on) is mapped.
DataPtr import_memfd(const AllocationHandle& h) {
  BRASA_CHECK(h.fd >= 0, "import_allocation: a memfd handle without a descriptor");
  BRASA_CHECK(h.offset == 0, "import_allocation: memfd handles have offset 0, got ", h.offset);
  return map_memfd(h.fd, h.nbytes, "import_allocation");
}

struct RegisterImporter {
  RegisterImporter() { register_allocation_importer(AllocationKind::Memfd, import_memfd); }
} register_importer;

}  // namespace

Storage import_shared_memory(int fd, size_t nbytes, void (*on_release)(void*), void* arg) {
  BRASA_CHECK(fd >= 0, "import_shared_memory: no descriptor");
  DataPtr d = map_memfd(fd, nbytes, "import_shared_memory");
  auto* block = static_cast<MemfdBlock*>(d.context());
  block->on_release = on_release;
  block->release_arg = arg;
  return Storage(make_intrusive<StorageImpl>(nbytes, std::move(d), memfd_allocator(), false));
}

Allocator* memfd_allocator() {
  static MemfdAllocator a;
  return &a;
}

namespace {
std::atomic<Allocator*> g_shared_allocator{nullptr};
}  // namespace

Allocator* shared_memory_allocator() {
  Allocator* a = g_shared_allocator.load(std::memory_order_acquire);
  return a ? a : memfd_allocator();
}

void set_shared_memory_allocator(Allocator* allocator) {
  g_shared_allocator.store(allocator, std::memory_order_release);
}

Tensor& Tensor::share_memory_() {
  BRASA_CHECK(defined(), "share_memory_: the tensor is undefined");
  StorageImpl* s = storage().get();
  if (is_shareable_kind(s->kind())) return *this;
  BRASA_CHECK(device().is_cpu(), "share_memory_: ", device(),
              " memory cannot be moved to shared memory here");
  Allocator* shared = shared_memory_allocator();
  if (shared == memfd_allocator()) {  // one pass: pages made and filled together
    const size_t n = s->nbytes();
    s->set_data_ptr(make_memfd(n, s->data()), n, shared);
  } else {
    s->move_to(shared);
  }
  return *this;
}

void release_cached_shared_memory() { SharedBlockPool::instance().release_all(); }
size_t cached_shared_memory() { return SharedBlockPool::instance().cached_bytes(); }

bool Tensor::is_shared() const {
  return defined() && storage() && is_shareable_kind(storage()->kind());
}

bool is_shareable_kind(AllocationKind kind) {
  return kind == AllocationKind::Memfd || kind == AllocationKind::NamedSegment ||
         kind == AllocationKind::CUDA || kind == AllocationKind::CUDAIpc;
}

}  // namespace brasa
