// The round engine of ProcessGroupShm: mapping the ranks' segments,
// publishing and awaiting progress, failures, and the zero-copy mappings.

#include <brasa/comm/errors.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "shm_impl.h"

namespace brasa::distributed {

using shm_detail::RoundHeader;
using shm_detail::SegmentHead;

namespace {

constexpr size_t kRingBytes = 256 << 10;
constexpr auto kSleepSlice = std::chrono::milliseconds(50);

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

bool reached(uint32_t value, uint32_t target) { return static_cast<int32_t>(value - target) >= 0; }

}  // namespace

size_t shm_detail::env_bytes(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  BRASA_CHECK(end && *end == '\0' && n > 0, "ProcessGroupShm: ", name,
              " must be a positive number of bytes, got '", v, "'");
  return static_cast<size_t>(n);
}

shm_detail::Group::Group(const std::shared_ptr<Store>& store, int rank_, int size_,
                         size_t chunk_bytes, std::chrono::milliseconds timeout,
                         bool cross_memory_attach)
    : rank(rank_), size(size_), layout(size_, chunk_bytes, kRingBytes) {
  own = create_segment(layout.total);
  auto* head = new (own->data()) SegmentHead();
  head->pid = static_cast<int32_t>(::getpid());
  const std::string host = host_name();
  // Where Yama restricts ptrace to ancestors, let the sibling ranks (same
  // user) attach; without Yama this fails harmlessly. Open MPI does the same
  // for its single-copy transfers.
  if (cross_memory_attach) ::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  {
    std::ostringstream me;
    me << ::getpid() << ' ' << segment_fd(own) << ' ' << layout.total << ' ' << host << ' '
       << reinterpret_cast<uintptr_t>(own->data());
    const std::string s = me.str();
    store->set("shm/" + std::to_string(rank), Bytes(s.begin(), s.end()));
  }
  peers.resize(static_cast<size_t>(size));
  mapped.resize(static_cast<size_t>(size));
  for (int p = 0; p < size; ++p) {
    Peer& peer = peers[static_cast<size_t>(p)];
    if (p == rank) {
      peer.segment = own;
    } else {
      const std::string key = "shm/" + std::to_string(p);
      store->wait({key}, timeout);
      const Bytes b = store->get(key);
      std::istringstream in(std::string(b.begin(), b.end()));
      long pid = 0, fd = -1;
      size_t bytes = 0;
      std::string their_host;
      uintptr_t their_head = 0;
      in >> pid >> fd >> bytes >> their_host >> their_head;
      BRASA_CHECK(their_host == host, "ProcessGroupShm: rank ", p, " runs on host '", their_host,
                  "' but rank ", rank, " on '", host,
                  "'; the shm backend needs every rank on one host (use shm+gloo or shm+mpi "
                  "across hosts)");
      BRASA_CHECK(bytes == layout.total, "ProcessGroupShm: rank ", p, " made a segment of ", bytes,
                  " bytes but rank ", rank, " expects ", layout.total,
                  " (set BRASA_SHM_CHUNK_BYTES alike on every rank)");
      peer.segment =
          map_peer_segment(static_cast<pid_t>(pid), static_cast<int>(fd), bytes,
                           "rank " + std::to_string(p) + " (pid " + std::to_string(pid) + ")");
      peer.process = PeerProcess(static_cast<pid_t>(pid));
      peer.head_address = their_head;
    }
    char* base = static_cast<char*>(peer.segment->data());
    peer.head = reinterpret_cast<SegmentHead*>(base);
    for (int i = 0; i < shm_detail::kSlots; ++i)
      peer.slots[i] = base + layout.slots_at + static_cast<size_t>(i) * layout.slot_bytes;
    peer.rings = base + layout.rings_at;
  }
  // Everyone has mapped everyone before the first collective (the memfds of
  // ranks that leave early must still be reachable through /proc).
  store->add("shm/mapped", 1);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (store->add("shm/mapped", 0) < size) {
    BRASA_CHECK(std::chrono::steady_clock::now() < deadline,
                "ProcessGroupShm: not every rank mapped the segments within the timeout");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  direct_bytes = static_cast<int64_t>(env_bytes("BRASA_SHM_DIRECT_BYTES", 32 << 10));
  // Cross-memory attach is used only if every rank can reach every peer
  // (containers may forbid process_vm_readv): each reads its peers' pids
  // from their private addresses, then all agree.
  bool reached_all = cross_memory_attach;
  for (int p = 0; p < size && reached_all; ++p) {
    if (p == rank) continue;
    int32_t pid = 0;
    iovec local{&pid, sizeof pid};
    iovec remote{reinterpret_cast<void*>(peers[static_cast<size_t>(p)].head_address +
                                         offsetof(SegmentHead, pid)),
                 sizeof pid};
    reached_all = ::process_vm_readv(peers[static_cast<size_t>(p)].process.pid(), &local, 1,
                                     &remote, 1, 0) == static_cast<ssize_t>(sizeof pid) &&
                  pid == peers[static_cast<size_t>(p)].process.pid();
  }
  store->add("shm/cma_refused", reached_all ? 0 : 1);
  store->add("shm/probed", 1);
  while (store->add("shm/probed", 0) < size) {
    BRASA_CHECK(std::chrono::steady_clock::now() < deadline,
                "ProcessGroupShm: not every rank probed its peers within the timeout");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  cma = size > 1 && store->add("shm/cma_refused", 0) == 0;
  // Spinning helps only when every rank has a CPU of its own.
  spin = usable_cpus() >= size ? std::chrono::microseconds(50) : std::chrono::microseconds(0);
}

void shm_detail::Group::publish(FutexWord& word, uint32_t value) {
  word.value.store(value, std::memory_order_seq_cst);
  if (word.sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(&word.value);
}

void shm_detail::Group::fail(const std::string& reason) {
  SegmentHead* head = peers[static_cast<size_t>(rank)].head;
  if (head->failed.load() == 0) {
    std::strncpy(head->reason, reason.c_str(), sizeof head->reason - 1);
    head->failed.store(1, std::memory_order_seq_cst);
  }
  futex_wake_all(&head->progress.value);
  futex_wake_all(&head->bell.value);
  std::lock_guard<std::mutex> lock(mu);
  if (!broken.exchange(true)) broken_reason = reason;
}

std::string shm_detail::Group::reason() {
  std::lock_guard<std::mutex> lock(mu);
  return broken_reason;
}

std::string shm_detail::Group::peer_failure(int p) const {
  const SegmentHead* head = peers[static_cast<size_t>(p)].head;
  if (head->failed.load(std::memory_order_acquire) != 0)
    return "rank " + std::to_string(p) + " gave up on the group: " +
           std::string(head->reason, strnlen(head->reason, sizeof head->reason));
  if (!peers[static_cast<size_t>(p)].process.alive())
    return "rank " + std::to_string(p) + " (pid " +
           std::to_string(peers[static_cast<size_t>(p)].process.pid()) + ") has exited";
  return "";
}

void shm_detail::Group::wait_peer(int p, uint32_t target) {
  FutexWord& word = peers[static_cast<size_t>(p)].head->progress;
  if (reached(word.value.load(std::memory_order_acquire), target)) return;
  if (spin.count() > 0) {
    const auto until = std::chrono::steady_clock::now() + spin;
    for (int i = 1;; ++i) {
      cpu_relax();
      if (reached(word.value.load(std::memory_order_acquire), target)) return;
      if ((i & 63) == 0 && std::chrono::steady_clock::now() > until) break;
    }
  }
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    const std::string gone = peer_failure(p);
    if (!gone.empty()) throw_failure(gone, p);
    if (now >= op.deadline) throw_timeout(target);
    word.sleepers.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = word.value.load(std::memory_order_seq_cst);
    if (!reached(seen, target))
      futex_wait(&word.value, seen,
                 std::min<std::chrono::nanoseconds>(kSleepSlice, op.deadline - now));
    word.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (reached(word.value.load(std::memory_order_acquire), target)) return;
  }
}

void shm_detail::Group::wait_all(uint32_t target) {
  for (int p = 0; p < size; ++p)
    if (p != rank) wait_peer(p, target);
}

[[noreturn]] void shm_detail::Group::throw_failure(const std::string& what, int p) {
  std::string text = "ProcessGroupShm." + std::string(op.name) + ": " + op.fingerprint.describe() +
                     " failed: " + what;
  // A peer that exited never reaches the collective: say so in the words the
  // timeout uses too.
  if (what.find("has exited") != std::string::npos)
    text += "; rank(s) " + std::to_string(p) + " did not reach it (dead)";
  fail(text);
  BRASA_DIST_THROW(DistNetworkError, text, "; the group can no longer be used");
}

[[noreturn]] void shm_detail::Group::throw_timeout(uint32_t target) {
  std::string missing;
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    if (!reached(peers[static_cast<size_t>(p)].head->progress.value.load(), target))
      missing += (missing.empty() ? "" : ", ") + std::to_string(p);
  }
  std::string text = "ProcessGroupShm." + std::string(op.name) + ": " + op.fingerprint.describe() +
                     " failed within its timeout of " + std::to_string(op.timeout.count()) + " ms";
  if (!missing.empty()) text += "; rank(s) " + missing + " did not reach it (stuck elsewhere)";
  fail(text);
  BRASA_DIST_THROW(DistTimeoutError, text, "; the group can no longer be used");
}

void shm_detail::Group::check_fingerprints() {
  const Fingerprint& mine = op.fingerprint;
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    const Fingerprint& theirs = header(p)->fingerprint;
    if (theirs == mine) continue;
    const std::string text = "ProcessGroupShm." + std::string(op.name) +
                             ": the ranks called different collectives: rank " +
                             std::to_string(rank) + " called " + mine.describe() + " but rank " +
                             std::to_string(p) + " called " + theirs.describe();
    fail(text);
    BRASA_DIST_THROW(DistError, text, "; the group can no longer be used");
  }
}

void shm_detail::Group::run(const RoundPlan& plan) {
  uint64_t total = std::max<uint64_t>(plan.rounds, 1);
  FutexWord& progress = peers[static_cast<size_t>(rank)].head->progress;
  for (uint64_t i = 0; i < total; ++i) {
    const uint64_t k = round++;
    // Every slot in use: wait until every peer finished the round whose slot
    // this one reuses.
    if (k >= shm_detail::kSlots) wait_all(state(k - shm_detail::kSlots + 1, 0));
    slot = static_cast<int>(k % shm_detail::kSlots);
    RoundHeader* h = header(rank);
    h->fingerprint = op.fingerprint;
    h->rounds = plan.rounds;
    h->buffer = plan.buffer ? *plan.buffer : shm_detail::ExposedBuffer();
    if (plan.counts)
      std::memcpy(reinterpret_cast<int64_t*>(h + 1), plan.counts,
                  sizeof(int64_t) * static_cast<size_t>(size));
    if (plan.write) plan.write(i);
    publish(progress, state(k, 1));
    wait_all(state(k, 1));
    check_fingerprints();
    if (i == 0)
      for (int p = 0; p < size; ++p) total = std::max(total, header(p)->rounds);
    if (plan.middle) {
      plan.middle(i);
      publish(progress, state(k, 2));
      wait_all(state(k, 2));
    }
    if (plan.read) plan.read(i);
    publish(progress, state(k, 3));
  }
}

void shm_detail::Group::cross_memory_failed(int p, const char* verb, int err) {
  // A killed peer loses its memory before its exit is reported: wait for the
  // report, so that the message says what happened.
  std::string gone = peer_failure(p);
  for (int i = 0; gone.empty() && err == ESRCH && i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gone = peer_failure(p);
  }
  throw_failure(gone.empty() ? std::string(verb) + " rank " + std::to_string(p) +
                                   "'s tensor failed: " + std::strerror(err)
                             : gone,
                p);
}

void shm_detail::Group::peer_read(int p, uint64_t address, void* to, size_t bytes) {
  char* at = static_cast<char*>(to);
  while (bytes > 0) {
    iovec local{at, bytes};
    iovec remote{reinterpret_cast<void*>(address), bytes};
    const ssize_t got =
        ::process_vm_readv(peers[static_cast<size_t>(p)].process.pid(), &local, 1, &remote, 1, 0);
    if (got <= 0) cross_memory_failed(p, "reading", errno);
    at += got;
    address += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
}

void shm_detail::Group::peer_write(int p, uint64_t address, const void* from, size_t bytes) {
  const char* at = static_cast<const char*>(from);
  while (bytes > 0) {
    iovec local{const_cast<char*>(at), bytes};
    iovec remote{reinterpret_cast<void*>(address), bytes};
    const ssize_t put =
        ::process_vm_writev(peers[static_cast<size_t>(p)].process.pid(), &local, 1, &remote, 1, 0);
    if (put <= 0) cross_memory_failed(p, "writing", errno);
    at += put;
    address += static_cast<uint64_t>(put);
    bytes -= static_cast<size_t>(put);
  }
}

bool shm_detail::Group::expose(const Tensor& buf, ExposedBuffer& e) {
  const Storage& storage = buf.storage();
  if (!storage || storage->kind() != AllocationKind::Memfd) return false;
  const AllocationHandle h = storage->export_handle();
  struct stat st {};
  if (h.fd < 0 || ::fstat(h.fd, &st) != 0) return false;
  e.fd = h.fd;
  e.inode = static_cast<uint64_t>(st.st_ino);
  e.bytes = h.nbytes;
  e.offset = static_cast<uint64_t>(static_cast<char*>(buf.data_ptr()) -
                                   static_cast<char*>(storage->data()));
  return true;
}

char* shm_detail::Group::peer_buffer(int p, const ExposedBuffer& e) {
  if (p == rank) return nullptr;
  auto& list = mapped[static_cast<size_t>(p)];
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (it->fd != e.fd) continue;
    if (it->inode == e.inode && it->storage->nbytes() == e.bytes) {
      return static_cast<char*>(it->storage->data()) + e.offset;
    }
    list.erase(it);  // the descriptor now names another memfd
    break;
  }
  constexpr size_t kKept = 16;  // per peer; the oldest mapping goes first
  if (list.size() >= kKept) list.erase(list.begin());
  Storage s = map_peer_segment(peers[static_cast<size_t>(p)].process.pid(), static_cast<int>(e.fd),
                               e.bytes, "a tensor of rank " + std::to_string(p));
  list.push_back(Mapped{e.fd, e.inode, s});
  return static_cast<char*>(s->data()) + e.offset;
}

}  // namespace brasa::distributed
