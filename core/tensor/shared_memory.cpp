#include <brasa/tensor/shared_memory.h>
#include <brasa/tensor/tensor.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cctype>
#include <cstring>
#include <fstream>
#include <string>

namespace brasa {

namespace {

// One memfd mapping: what the DataPtr's deleter releases.
struct MemfdBlock {
  int fd;
  void* ptr;
  size_t nbytes;
  void (*on_release)(void*) = nullptr;
  void* release_arg = nullptr;
};

void free_memfd(void* ctx) {
  auto* b = static_cast<MemfdBlock*>(ctx);
  if (b->on_release) b->on_release(b->release_arg);
  if (b->ptr) munmap(b->ptr, b->nbytes);
  if (b->fd >= 0) close(b->fd);
  delete b;
}

std::string open_files_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return "unknown";
  return std::to_string(r.rlim_cur);
}

// Maps `fd` (owned by the result) as `nbytes` of shared memory; `populate`
// maps every page at once (a new allocation about to be written: one call
// instead of a fault per page).
DataPtr map_memfd(int fd, size_t nbytes, const char* what, bool populate) {
  void* p = nullptr;
  if (nbytes > 0) {
    p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0),
             fd, 0);
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

class MemfdAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    check_shared_memory_room(nbytes);
    int fd = memfd_create("brasa-shared", MFD_CLOEXEC);
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
    if (nbytes > 0) {
      // Reserve the pages now: a full /dev/shm or memory cgroup fails here.
      int r = fallocate(fd, 0, 0, static_cast<off_t>(nbytes));
      if (r != 0) {
        const int err = errno;
        close(fd);
        BRASA_CHECK(err != ENOSPC && err != ENOMEM, "share_memory_: cannot reserve ", nbytes,
                    " bytes of shared memory (", std::strerror(err),
                    "): the shared-memory limit (tmpfs size or memory cgroup) is reached");
        BRASA_ERROR("share_memory_: cannot reserve ", nbytes,
                    " bytes of shared memory: ", std::strerror(err));
      }
    }
    return map_memfd(fd, nbytes, "share_memory_", true);
  }

  AllocationHandle export_handle(const DataPtr& d, size_t nbytes) const override {
    AllocationHandle h;
    h.kind = AllocationKind::Memfd;
    h.device = Device(kCPU);
    h.nbytes = nbytes;
    h.fd = static_cast<const MemfdBlock*>(d.context())->fd;
    return h;
  }
};

// The receiving side: the handle's descriptor (received over a socket, owned
// by the new allocation from now on) is mapped.
DataPtr import_memfd(const AllocationHandle& h) {
  BRASA_CHECK(h.fd >= 0, "import_allocation: a memfd handle without a descriptor");
  BRASA_CHECK(h.offset == 0, "import_allocation: memfd handles have offset 0, got ", h.offset);
  return map_memfd(h.fd, h.nbytes, "import_allocation", false);
}

struct RegisterImporter {
  RegisterImporter() { register_allocation_importer(AllocationKind::Memfd, import_memfd); }
} register_importer;

}  // namespace

Storage import_shared_memory(int fd, size_t nbytes, void (*on_release)(void*), void* arg) {
  BRASA_CHECK(fd >= 0, "import_shared_memory: no descriptor");
  DataPtr d = map_memfd(fd, nbytes, "import_shared_memory", false);
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
  s->move_to(shared_memory_allocator());
  return *this;
}

bool Tensor::is_shared() const {
  return defined() && storage() && is_shareable_kind(storage()->kind());
}

bool is_shareable_kind(AllocationKind kind) {
  return kind == AllocationKind::Memfd || kind == AllocationKind::NamedSegment ||
         kind == AllocationKind::CUDA || kind == AllocationKind::CUDAIpc;
}

}  // namespace brasa
