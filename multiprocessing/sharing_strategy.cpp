#include <brasa/multiprocessing/sharing_strategy.h>
#include <brasa/tensor/shared_memory.h>
#include <brasa/util/error.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>

namespace brasa::multiprocessing {

namespace bip = boost::interprocess;

namespace {

constexpr const char* kPrefix = "brasa_fs_";
constexpr uint64_t kMagic = 0x3153474553415242;  // "BRASEGS1"
// The header takes one page so that the data stays page aligned.
constexpr size_t kHeaderBytes = 4096;
constexpr int kSlots = 200;

// One process's references to a segment. A slot belongs to (pid, start
// time) for good once taken — freeing it could race with its owner adding a
// reference — unless its owner died.
struct Slot {
  int32_t pid;
  int32_t count;
  uint64_t start;
};

struct Header {
  uint64_t magic;  // written last: a segment without it is still being made
  uint64_t nbytes;
  Slot slots[kSlots];
};
static_assert(sizeof(Header) <= kHeaderBytes);

template <class T>
std::atomic_ref<T> at(T& v) {
  return std::atomic_ref<T>(v);
}

// The start time of `pid` (field 22 of /proc/<pid>/stat), or -1 when no such
// process lives (gone, or a zombie).
int64_t start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  const auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream rest(line.substr(close_paren + 2));
  std::string state, field;
  rest >> state;
  if (state == "Z" || state == "X") return -1;
  for (int i = 4; i < 22 && rest >> field; ++i) {
  }
  int64_t t = -1;
  rest >> t;
  return t;
}

bool alive(pid_t pid, uint64_t start) {
  if (pid <= 0) return false;
  const int64_t t = start_time(pid);
  return t >= 0 && (start == 0 || static_cast<uint64_t>(t) == start);
}

struct Self {
  pid_t pid;
  uint64_t start;
};
Self self() {
  thread_local Self cached{-1, 0};
  const pid_t pid = getpid();  // a forked child is another process
  if (cached.pid != pid)
    cached = Self{pid, static_cast<uint64_t>(std::max<int64_t>(0, start_time(pid)))};
  return cached;
}

// The slot of (pid, start), taken if needed; nullptr when all are in use.
Slot* claim_slot(Header* h, pid_t pid, uint64_t start) {
  for (Slot& s : h->slots)
    if (at(s.pid).load() == pid) {
      if (at(s.start).load() != start) {  // an earlier process with this pid died
        at(s.count).store(0);
        at(s.start).store(start);
      }
      return &s;
    }
  for (Slot& s : h->slots) {
    int32_t expected = 0;
    if (at(s.pid).compare_exchange_strong(expected, pid)) {
      at(s.start).store(start);
      return &s;
    }
  }
  return nullptr;
}

void add_ref(Header* h, pid_t pid, uint64_t start, const std::string& name) {
  Slot* s = claim_slot(h, pid, start);
  if (!s) {  // make room: slots of dead processes are free again
    for (Slot& d : h->slots)
      if (!alive(at(d.pid).load(), at(d.start).load())) at(d.count).store(0), at(d.pid).store(0);
    s = claim_slot(h, pid, start);
  }
  BRASA_CHECK(s != nullptr, "shared memory segment ", name, ": more than ", kSlots,
              " live processes hold it");
  at(s->count).fetch_add(1);
}

// References held by live processes; clears those of dead ones.
int64_t live_references(Header* h) {
  int64_t total = 0;
  for (Slot& s : h->slots) {
    const int32_t c = at(s.count).load();
    if (c == 0) continue;  // (a keeper's count may be below zero for a moment)
    if (alive(at(s.pid).load(), at(s.start).load()))
      total += c;
    else
      at(s.count).store(0);
  }
  return total;
}

void drop_ref(Header* h, pid_t pid, const std::string& name) {
  for (Slot& s : h->slots)
    if (at(s.pid).load() == pid) {
      if (at(s.count).fetch_sub(1) > 1) return;
      break;
    }
  // The last live reference: the name goes (mappings stay valid until unmapped).
  if (live_references(h) <= 0) bip::shared_memory_object::remove(name.c_str());
}

// One mapping of a segment: what the DataPtr's deleter releases.
struct SegmentBlock {
  std::string name;
  bip::mapped_region region;
  pid_t owner;  // the process whose reference this mapping holds
  void (*on_release)(void*) = nullptr;
  void* release_arg = nullptr;
  Header* header() { return static_cast<Header*>(region.get_address()); }
};

void free_segment(void* ctx) {
  auto* b = static_cast<SegmentBlock*>(ctx);
  if (b->on_release) b->on_release(b->release_arg);
  // A forked child inherits the mapping but not the reference.
  if (getpid() == b->owner) drop_ref(b->header(), b->owner, b->name);
  delete b;  // unmaps
}

DataPtr data_ptr_of(SegmentBlock* b) {
  char* base = static_cast<char*>(b->region.get_address());
  return DataPtr(base + kHeaderBytes, b, free_segment, Device(kCPU), AllocationKind::NamedSegment);
}

[[noreturn]] void fail(const char* op, const std::string& name,
                       const bip::interprocess_exception& e) {
  BRASA_ERROR(op, ": shared memory segment /dev/shm/", name, ": ", e.what(),
              e.get_native_error() == EMFILE || e.get_native_error() == ENFILE
                  ? " (out of file descriptors: see ulimit -n)"
                  : "");
}

// Maps an existing segment of `nbytes` (plus its header) and adds this
// process's reference.
SegmentBlock* open_segment(const std::string& name, size_t nbytes, const char* op) {
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);
    bip::offset_t size = 0;
    shm.get_size(size);
    BRASA_CHECK(static_cast<size_t>(size) >= kHeaderBytes + nbytes, op, ": shared memory segment ",
                name, " holds ", size, " bytes, fewer than the ", kHeaderBytes + nbytes,
                " expected");
    auto* b = new SegmentBlock{
        name, bip::mapped_region(shm, bip::read_write, 0, kHeaderBytes + nbytes), self().pid};
    Header* h = b->header();
    if (at(h->magic).load() != kMagic || h->nbytes != nbytes) {
      delete b;
      BRASA_ERROR(op, ": ", name, " is not a Brasa shared memory segment of ", nbytes, " bytes");
    }
    try {
      add_ref(h, self().pid, self().start, name);
    } catch (...) {
      delete b;
      throw;
    }
    return b;
  } catch (const bip::interprocess_exception& e) {
    if (e.get_native_error() == ENOENT)
      BRASA_ERROR(op, ": shared memory segment ", name,
                  " no longer exists (every process holding it died before it was received)");
    fail(op, name, e);
  }
}

std::once_flag g_first_sweep;

class NamedSegmentAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    std::call_once(g_first_sweep, [] { sweep_shared_memory(); });
    detail::release_references_at_exit();
    check_shared_memory_room(nbytes);
    const Self me = self();
    static std::atomic<uint64_t> counter{0};
    thread_local std::mt19937_64 rng(std::random_device{}());
    const std::string name = kPrefix + std::to_string(me.pid) + "_" +
                             std::to_string(counter.fetch_add(1)) + "_" +
                             std::to_string(rng() & 0xffffffffu);
    const size_t total = kHeaderBytes + nbytes;
    try {
      bip::shared_memory_object shm(bip::create_only, name.c_str(), bip::read_write);
      // Reserve the pages now (ftruncate would not): a full /dev/shm fails here, not as SIGBUS.
      const int fd = shm.get_mapping_handle().handle;
      if (fallocate(fd, 0, 0, static_cast<off_t>(total)) != 0) {
        const int err = errno;
        bip::shared_memory_object::remove(name.c_str());
        BRASA_CHECK(err != ENOSPC && err != ENOMEM, "share_memory_: cannot reserve ", nbytes,
                    " bytes of shared memory in /dev/shm (", std::strerror(err),
                    "): the shared-memory limit (tmpfs size or memory cgroup) is reached");
        BRASA_ERROR("share_memory_: cannot reserve ", nbytes,
                    " bytes in /dev/shm: ", std::strerror(err));
      }
      auto* b = new SegmentBlock{name, bip::mapped_region(shm, bip::read_write, 0, total), me.pid};
      madvise(b->region.get_address(), total, MADV_POPULATE_WRITE);  // best effort: fewer faults
      Header* h = b->header();
      h->nbytes = nbytes;
      h->slots[0] = Slot{me.pid, 1, me.start};
      at(h->magic).store(kMagic);
      return data_ptr_of(b);
    } catch (const bip::interprocess_exception& e) {
      bip::shared_memory_object::remove(name.c_str());
      fail("share_memory_", name, e);
    }
  }

  AllocationHandle export_handle(const DataPtr& d, size_t nbytes) const override {
    AllocationHandle h;
    h.kind = AllocationKind::NamedSegment;
    h.device = Device(kCPU);
    h.nbytes = nbytes;
    h.offset = kHeaderBytes;
    h.name = static_cast<const SegmentBlock*>(d.context())->name;
    return h;
  }
};

DataPtr import_handle(const AllocationHandle& h) {
  BRASA_CHECK(h.offset == kHeaderBytes, "import_allocation: a named segment's data starts at ",
              kHeaderBytes, ", got offset ", h.offset);
  return data_ptr_of(open_segment(h.name, h.nbytes, "import_allocation"));
}

struct RegisterImporter {
  RegisterImporter() { register_allocation_importer(AllocationKind::NamedSegment, import_handle); }
} register_importer;

// The pid in a segment's name (its creator), or -1.
pid_t creator_of(const std::string& name) {
  return static_cast<pid_t>(std::strtol(name.c_str() + std::strlen(kPrefix), nullptr, 10));
}

// Whether the segment `name` is orphaned: its creator died before it was
// made whole, or no live process holds a reference (clearing dead ones).
bool orphaned(const std::string& name) {
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);
    bip::offset_t size = 0;
    shm.get_size(size);
    if (static_cast<size_t>(size) < kHeaderBytes) return !alive(creator_of(name), 0);
    bip::mapped_region region(shm, bip::read_write, 0, kHeaderBytes);
    auto* h = static_cast<Header*>(region.get_address());
    if (at(h->magic).load() != kMagic) return !alive(creator_of(name), 0);
    return live_references(h) <= 0;
  } catch (const bip::interprocess_exception&) {
    return false;  // gone already, or not ours to judge
  }
}

// The named segments in /dev/shm.
std::vector<std::string> segment_names() {
  std::vector<std::string> names;
  DIR* dir = opendir("/dev/shm");
  if (!dir) return names;
  while (dirent* e = readdir(dir))
    if (std::strncmp(e->d_name, kPrefix, std::strlen(kPrefix)) == 0) names.emplace_back(e->d_name);
  closedir(dir);
  return names;
}

// Gives up every reference this process holds to `name` (see
// release_process_references).
void release_references(const std::string& name, pid_t pid) {
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);
    bip::offset_t size = 0;
    shm.get_size(size);
    if (static_cast<size_t>(size) < kHeaderBytes) return;
    bip::mapped_region region(shm, bip::read_write, 0, kHeaderBytes);
    auto* h = static_cast<Header*>(region.get_address());
    if (at(h->magic).load() != kMagic) return;
    bool held = false;
    for (Slot& s : h->slots)
      if (at(s.pid).load() == pid && at(s.count).exchange(0) != 0) held = true;
    if (held && live_references(h) <= 0) bip::shared_memory_object::remove(name.c_str());
  } catch (const bip::interprocess_exception&) {
  }
}

}  // namespace

size_t sweep_shared_memory() {
  size_t removed = 0;
  for (const std::string& name : segment_names())
    if (orphaned(name) && bip::shared_memory_object::remove(name.c_str())) ++removed;
  return removed;
}

void set_sharing_strategy(const std::string& strategy) {
  if (strategy == "file_descriptor") {
    set_shared_memory_allocator(nullptr);
  } else if (strategy == "file_system") {
    std::call_once(g_first_sweep, [] { sweep_shared_memory(); });
    set_shared_memory_allocator(detail::named_segment_allocator());
  } else {
    BRASA_ERROR("set_sharing_strategy: unknown strategy '", strategy,
                "' (expected 'file_descriptor' or 'file_system')");
  }
}

std::string get_sharing_strategy() {
  return shared_memory_allocator() == detail::named_segment_allocator() ? "file_system"
                                                                        : "file_descriptor";
}

std::vector<std::string> get_all_sharing_strategies() { return {"file_descriptor", "file_system"}; }

namespace detail {

namespace {
SegmentBlock* block_of(const StorageImpl& storage) {
  BRASA_CHECK(storage.kind() == AllocationKind::NamedSegment,
              "shared memory: the storage is not a named segment");
  return static_cast<SegmentBlock*>(const_cast<StorageImpl&>(storage).data_ptr().context());
}
// Takes back the reference a message held in `keeper`'s name (see
// hold_for_transfer), where this process holds one of its own.
void move_transfer_hold(Header* h, pid_t keeper, ProcessId sender) {
  Slot* slot =
      claim_slot(h, keeper, static_cast<uint64_t>(std::max<int64_t>(0, start_time(keeper))));
  if (!slot) return;
  if (at(slot->count).fetch_sub(1) <= 0 && !alive(sender.pid, sender.start))
    at(slot->count).fetch_add(1);  // the sender died before adding it: it never will
}
}  // namespace

Allocator* named_segment_allocator() {
  static NamedSegmentAllocator a;
  return &a;
}

std::string segment_name(const StorageImpl& storage) { return block_of(storage)->name; }

void hold_for_transfer(const StorageImpl& storage, pid_t keeper) {
  SegmentBlock* b = block_of(storage);
  const int64_t start = start_time(keeper);
  BRASA_CHECK(start >= 0, "Queue.put: the process that made the queue (pid ", keeper, ") is gone");
  add_ref(b->header(), keeper, static_cast<uint64_t>(start), b->name);
}

void release_process_references() {
  const pid_t me = getpid();
  for (const std::string& name : segment_names()) release_references(name, me);
}

void release_references_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit([] { release_process_references(); }); });
}

ProcessId this_process() {
  const Self me = self();
  return ProcessId{me.pid, me.start};
}

void drop_transfer_hold(const StorageImpl& storage, pid_t keeper, ProcessId sender) {
  move_transfer_hold(block_of(storage)->header(), keeper, sender);
}

Storage import_named_segment(const std::string& name, size_t nbytes, pid_t keeper, ProcessId sender,
                             void (*on_release)(void*), void* arg) {
  SegmentBlock* b = open_segment(name, nbytes, "Queue.get");
  move_transfer_hold(b->header(), keeper, sender);
  b->on_release = on_release;
  b->release_arg = arg;
  return Storage(
      make_intrusive<StorageImpl>(nbytes, data_ptr_of(b), named_segment_allocator(), false));
}

void drop_transfer_hold(const std::string& name, pid_t keeper, ProcessId sender) {
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);
    bip::mapped_region region(shm, bip::read_write, 0, kHeaderBytes);
    auto* h = static_cast<Header*>(region.get_address());
    if (at(h->magic).load() != kMagic) return;
    move_transfer_hold(h, keeper, sender);
    if (live_references(h) <= 0) bip::shared_memory_object::remove(name.c_str());
  } catch (const bip::interprocess_exception&) {
  }
}

}  // namespace detail

}  // namespace brasa::multiprocessing
