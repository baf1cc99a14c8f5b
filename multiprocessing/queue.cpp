#include <brasa/multiprocessing/processes.h>
#include <brasa/multiprocessing/queue.h>
#include <brasa/multiprocessing/sharing_strategy.h>
#include <brasa/tensor/shared_memory.h>
#include <brasa/tensor/tensor_impl.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace brasa::multiprocessing {

namespace {

constexpr uint32_t kMagic = 0x42525131;  // "BRQ1"
constexpr size_t kMaxDescriptors = 250;  // the kernel takes at most 253 per message
constexpr size_t kMaxMessage = 1 << 20;  // metadata bytes per message

enum Tag : uint8_t { kNone, kTensor, kTensorList, kDict, kDouble, kInt, kBool, kString, kIntList };

// ---- writing ----

struct Encoder {
  std::string bytes;
  Encoder* table = this;       // where the storage list goes
  std::vector<Storage> keep;   // one entry per distinct storage
  std::vector<int> fds;        // of the memfd storages, in order
  std::vector<Storage> named;  // the named segments

  template <class T>
  void raw(const T& v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void text(const std::string& s) {
    raw(static_cast<uint64_t>(s.size()));
    bytes.append(s);
  }

  // Storages are listed once per message: kind, size, and the name of a
  // named segment (a memfd travels as a descriptor beside the message).
  uint32_t storage_of(Tensor t) {
    // In place: the sender's CPU tensors now live in shared memory too. CUDA
    // memory is shared as it is, by IPC handle.
    if (!t.is_cuda()) t.share_memory_();
    BRASA_CHECK(t.storage()->kind() != AllocationKind::CUDAIpc,
                "Queue.put: a CUDA tensor received from another process cannot be sent again "
                "(only the process that allocated it can share it; send it from there, or send a "
                "clone)");
    const StorageImpl* s = t.storage().get();
    for (size_t i = 0; i < keep.size(); ++i)
      if (keep[i].get() == s) return static_cast<uint32_t>(i);
    BRASA_CHECK(keep.size() < kMaxDescriptors, "Queue.put: a message may hold at most ",
                kMaxDescriptors, " distinct storages; send them in several messages");
    AllocationHandle h = t.storage()->export_handle();
    BRASA_CHECK(h.kind == AllocationKind::Memfd || h.kind == AllocationKind::NamedSegment ||
                    h.kind == AllocationKind::CUDAIpc,
                "Queue.put: ", allocation_kind_name(h.kind),
                " memory cannot travel through this queue");
    Encoder& out = *table;
    out.raw(static_cast<uint8_t>(h.kind));
    out.raw(static_cast<uint64_t>(h.nbytes));
    if (h.kind == AllocationKind::Memfd) {
      fds.push_back(h.fd);
    } else if (h.kind == AllocationKind::CUDAIpc) {
      // The IPC handles travel in the message, the reference counters as a descriptor.
      out.text(h.name);
      out.raw(static_cast<int8_t>(h.device.index()));
      out.raw(static_cast<uint64_t>(h.offset));
      fds.push_back(h.fd);
    } else {
      out.text(h.name);
      named.push_back(t.storage());
    }
    keep.push_back(t.storage());
    return static_cast<uint32_t>(keep.size() - 1);
  }

  void tensor(const Tensor& t) {
    raw(static_cast<uint8_t>(t.defined()));
    if (!t.defined()) return;
    BRASA_CHECK(t.device().is_cpu() || t.device().is_cuda(), "Queue.put: a tensor on ", t.device(),
                " cannot travel through this queue (CPU and CUDA tensors only)");
    BRASA_CHECK(!(t.requires_grad() && !t.is_leaf()),
                "Queue.put: Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                "since autograd does not support crossing process boundaries. If you just want "
                "to transfer the data, call detach() on the tensor before putting it on the "
                "queue.");
    raw(static_cast<int8_t>(t.scalar_type()));
    raw(storage_of(t));
    raw(static_cast<int64_t>(t.storage_offset()));
    raw(static_cast<uint32_t>(t.dim()));
    for (int64_t d = 0; d < t.dim(); ++d) raw(static_cast<int64_t>(t.size(d)));
    for (int64_t d = 0; d < t.dim(); ++d) raw(static_cast<int64_t>(t.stride(d)));
    raw(static_cast<uint8_t>(t.requires_grad()));
    const Tensor& g = t.requires_grad() ? t.grad() : Tensor();
    tensor(g);
  }

  void value(const IValue& v) {
    if (v.isNone()) {
      raw(kNone);
    } else if (v.isTensor()) {
      raw(kTensor);
      tensor(v.toTensor());
    } else if (v.isTensorList()) {
      raw(kTensorList);
      auto list = v.toTensorVector();
      raw(static_cast<uint64_t>(list.size()));
      for (const Tensor& t : list) tensor(t);
    } else if (v.isGenericDict()) {
      raw(kDict);
      const auto& items = v.toTensorItems();
      raw(static_cast<uint64_t>(items.size()));
      for (const auto& [k, t] : items) {
        text(k);
        tensor(t);
      }
    } else if (v.isDouble()) {
      raw(kDouble);
      raw(v.toDouble());
    } else if (v.isInt()) {
      raw(kInt);
      raw(v.toInt());
    } else if (v.isBool()) {
      raw(kBool);
      raw(static_cast<uint8_t>(v.toBool()));
    } else if (v.isString()) {
      raw(kString);
      text(v.toStringRef());
    } else {
      raw(kIntList);
      auto list = v.toIntVector();
      raw(static_cast<uint64_t>(list.size()));
      for (int64_t x : list) raw(x);
    }
  }
};

// ---- reading ----

struct Decoder {
  const char* p;
  const char* end;
  std::vector<Storage> storages;

  template <class T>
  T raw() {
    BRASA_CHECK(static_cast<size_t>(end - p) >= sizeof(T),
                "Queue.get: the message is truncated (malformed)");
    T v;
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::string text() {
    const uint64_t n = raw<uint64_t>();
    BRASA_CHECK(n <= static_cast<uint64_t>(end - p), "Queue.get: a string runs past the message");
    std::string s(p, n);
    p += n;
    return s;
  }
  uint64_t count() {
    const uint64_t n = raw<uint64_t>();
    BRASA_CHECK(n <= static_cast<uint64_t>(end - p), "Queue.get: a list of ", n,
                " entries cannot fit in the message");
    return n;
  }

  Tensor tensor() {
    if (!raw<uint8_t>()) return Tensor();
    const int8_t dtype = raw<int8_t>();
    BRASA_CHECK(dtype >= 0 && dtype < static_cast<int8_t>(ScalarType::Undefined),
                "Queue.get: unknown dtype code ", static_cast<int>(dtype));
    const uint32_t index = raw<uint32_t>();
    BRASA_CHECK(index < storages.size(), "Queue.get: storage ", index, " of ", storages.size());
    const int64_t offset = raw<int64_t>();
    const uint32_t dim = raw<uint32_t>();
    BRASA_CHECK(dim <= 64, "Queue.get: ", dim, " dimensions");
    std::vector<int64_t> sizes(dim), strides(dim);
    for (auto& s : sizes) s = raw<int64_t>();
    for (auto& s : strides) s = raw<int64_t>();
    const auto type = static_cast<ScalarType>(dtype);
    // The view must lie inside its storage.
    const int64_t item = static_cast<int64_t>(elementSize(type));
    const int64_t capacity = static_cast<int64_t>(storages[index]->nbytes()) / item;
    int64_t last = offset;
    bool empty = false;
    for (uint32_t d = 0; d < dim; ++d) {
      BRASA_CHECK(sizes[d] >= 0 && strides[d] >= 0, "Queue.get: negative size or stride");
      empty |= sizes[d] == 0;
      if (sizes[d] > 0) last += (sizes[d] - 1) * strides[d];
    }
    BRASA_CHECK(offset >= 0 && (empty || last < capacity), "Queue.get: a tensor view of shape ",
                IntArrayRef(sizes), " at offset ", offset, " exceeds its storage of ", capacity,
                " elements");
    Tensor t(make_intrusive<TensorImpl>(storages[index], type, sizes, strides, offset));
    const bool requires_grad = raw<uint8_t>() != 0;
    Tensor grad = tensor();
    if (requires_grad) t.requires_grad_(true);
    if (grad.defined()) t.mutable_grad() = grad;
    return t;
  }

  IValue value() {
    switch (raw<uint8_t>()) {
      case kNone:
        return IValue();
      case kTensor:
        return IValue(tensor());
      case kTensorList: {
        std::vector<Tensor> list(count());
        for (auto& t : list) t = tensor();
        return IValue(std::move(list));
      }
      case kDict: {
        IValue::TensorDict items(count());
        for (auto& [k, t] : items) {
          k = text();
          t = tensor();
        }
        return IValue(std::move(items));
      }
      case kDouble:
        return IValue(raw<double>());
      case kInt:
        return IValue(raw<int64_t>());
      case kBool:
        return IValue(raw<uint8_t>() != 0);
      case kString:
        return IValue(text());
      case kIntList: {
        std::vector<int64_t> list(count());
        for (auto& x : list) x = raw<int64_t>();
        return IValue(std::move(list));
      }
      default:
        BRASA_ERROR("Queue.get: unknown value tag (malformed message)");
    }
  }
};

// Storages this process received, by identity (a memfd's inode, a
// segment's name): a storage sent again while this process still holds it is
// not mapped again and arrives as the same storage. Entries hold plain
// pointers and are forgotten when their storage's memory is released.
class ReceivedStorages {
 public:
  struct Ticket {
    ReceivedStorages* cache;
    std::string key;
  };

  Storage memfd(int fd, size_t nbytes) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return import_shared_memory(fd, nbytes, nullptr, nullptr);
    const std::string key = "memfd " + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino);
    auto [s, fresh] = get_or_import(
        key, nbytes, [&](Ticket* t) { return import_shared_memory(fd, nbytes, forget, t); });
    if (!fresh) close(fd);  // already mapped here
    return s;
  }

  Storage segment(const std::string& name, size_t nbytes, pid_t keeper, detail::ProcessId sender) {
    auto [s, fresh] = get_or_import(name, nbytes, [&](Ticket* t) {
      return detail::import_named_segment(name, nbytes, keeper, sender, forget, t);
    });
    // Mapped here already: this process's reference covers it, not the message's.
    if (!fresh) detail::drop_transfer_hold(*s.get(), keeper, sender);
    return s;
  }

 private:
  // The cached storage for `key`, or a new one from import(ticket); whether it is new.
  template <class Import>
  std::pair<Storage, bool> get_or_import(const std::string& key, size_t nbytes, Import import) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.impl->nbytes() == nbytes) {
      // Null when that storage is being destroyed right now: map anew.
      auto held = intrusive_ptr<StorageImpl>::try_retain(it->second.impl);
      if (held) return {Storage(std::move(held)), false};
    }
    auto* ticket = new Ticket{this, key};
    Storage s;
    try {
      s = import(ticket);
    } catch (...) {
      delete ticket;
      throw;
    }
    cache_[key] = Entry{s.get(), ticket};
    return {std::move(s), true};
  }

  struct Entry {
    StorageImpl* impl;
    Ticket* ticket;
  };
  static void forget(void* arg) {
    auto* t = static_cast<Ticket*>(arg);
    {
      std::lock_guard<std::mutex> lock(t->cache->mu_);
      auto it = t->cache->cache_.find(t->key);
      if (it != t->cache->cache_.end() && it->second.ticket == t) t->cache->cache_.erase(it);
    }
    delete t;
  }
  std::mutex mu_;
  std::map<std::string, Entry> cache_;
};

ReceivedStorages& received() {
  static ReceivedStorages* cache = new ReceivedStorages;  // outlives every storage
  return *cache;
}
Storage received_memfd(int fd, size_t nbytes) { return received().memfd(fd, nbytes); }
Storage received_segment(const std::string& name, size_t nbytes, pid_t keeper,
                         detail::ProcessId sender) {
  return received().segment(name, nbytes, keeper, sender);
}

// Waits until `fd` is ready for `events`; false when the timeout passed.
bool wait_ready(int fd, short events, std::optional<std::chrono::milliseconds> timeout,
                const char* op) {
  const auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                                : std::chrono::steady_clock::time_point::max();
  for (;;) {
    int ms = -1;
    if (timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      ms = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    pollfd p{fd, events, 0};
    int r = poll(&p, 1, ms);
    if (r > 0) return true;
    if (r == 0) return false;
    BRASA_CHECK(errno == EINTR, op, ": poll failed: ", std::strerror(errno));
  }
}

}  // namespace

Queue::Queue() {
  int fds[2];
  BRASA_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0,
              "Queue: socketpair failed: ", std::strerror(errno),
              errno == EMFILE ? " (out of file descriptors: see ulimit -n)" : "");
  send_fd_ = fds[0];
  recv_fd_ = fds[1];
  keeper_ = getpid();
  detail::release_references_at_exit();  // the references this queue's messages leave here
  // Room for many small messages before put blocks (best effort).
  int size = 4 << 20;
  setsockopt(send_fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  setsockopt(recv_fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

Queue::Queue(Adopted, const detail::QueueEnds& ends)
    : send_fd_(ends.send_fd), recv_fd_(ends.recv_fd), keeper_(ends.keeper) {
  detail::release_references_at_exit();
}

namespace detail {
QueueEnds queue_ends(const Queue& q) { return {q.send_fd_, q.recv_fd_, q.keeper_}; }
std::unique_ptr<Queue> adopt_queue(const QueueEnds& ends) {
  return std::unique_ptr<Queue>(new Queue(Queue::Adopted{}, ends));
}
}  // namespace detail

Queue::~Queue() {
  // Its maker drops what is still queued: a message keeps its named segments
  // alive in the maker's name (see queue.h).
  if (getpid() == keeper_) {
    try {
      while (get_nowait()) {
      }
    } catch (...) {
    }
  }
  if (send_fd_ >= 0) close(send_fd_);
  if (recv_fd_ >= 0) close(recv_fd_);
}

void Queue::put(const IValue& message, std::optional<std::chrono::milliseconds> timeout) {
  Encoder table, body;
  body.table = &table;
  body.value(message);
  Encoder e;
  e.raw(kMagic);
  const detail::ProcessId me = detail::this_process();
  e.raw(static_cast<int32_t>(me.pid));
  e.raw(me.start);
  e.raw(static_cast<uint32_t>(body.keep.size()));
  e.raw(static_cast<uint32_t>(body.fds.size()));
  e.bytes += table.bytes;
  e.bytes += body.bytes;
  BRASA_CHECK(e.bytes.size() <= kMaxMessage, "Queue.put: the message's metadata takes ",
              e.bytes.size(), " bytes, more than the ", kMaxMessage,
              " a message may; send it in parts");
  send(e.bytes, body.fds, timeout);
  // Sent: the message now keeps its named segments alive (until now, the
  // references `body` holds did).
  for (const Storage& s : body.named) detail::hold_for_transfer(*s.get(), keeper_);
}

void Queue::send(const std::string& bytes, const std::vector<int>& fds,
                 std::optional<std::chrono::milliseconds> timeout) {
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<size_t>(fds.size(), 1)));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    BRASA_CHECK(wait_ready(send_fd_, POLLOUT, timeout, "Queue.put"), "Queue.put: timed out after ",
                timeout ? timeout->count() : 0, " ms: the queue is full (nobody is reading)");
    ssize_t n = sendmsg(send_fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return;
    if (errno == EAGAIN || errno == EINTR) continue;
    BRASA_ERROR("Queue.put: sendmsg failed: ", std::strerror(errno),
                errno == EMSGSIZE ? " (message too large)" : "");
  }
}

std::optional<IValue> Queue::get_nowait() {
  thread_local std::vector<char> buffer(kMaxMessage + 64);
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kMaxDescriptors));
  iovec iov{buffer.data(), buffer.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n;
  do {
    n = recvmsg(recv_fd_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    BRASA_CHECK(errno == EAGAIN || errno == EWOULDBLOCK,
                "Queue.get: recvmsg failed: ", std::strerror(errno));
    return std::nullopt;
  }
  std::vector<int> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const int* data = reinterpret_cast<const int*>(CMSG_DATA(c));
      fds.insert(fds.end(), data, data + k);
    }
  // Descriptors not yet owned by a storage are closed, and references
  // held for named segments not yet mapped are dropped, on every error path.
  size_t fds_owned = 0;
  std::vector<std::string> names;
  size_t names_owned = 0;
  detail::ProcessId sender;
  try {
    BRASA_CHECK(!(msg.msg_flags & MSG_CTRUNC), "Queue.get: descriptors were dropped (",
                "out of file descriptors? see ulimit -n)");
    BRASA_CHECK(!(msg.msg_flags & MSG_TRUNC), "Queue.get: the message was truncated");
    Decoder d{buffer.data(), buffer.data() + n, {}};
    BRASA_CHECK(d.raw<uint32_t>() == kMagic, "Queue.get: not a queue message");
    sender.pid = d.raw<int32_t>();
    sender.start = d.raw<uint64_t>();
    const uint32_t count = d.raw<uint32_t>();
    const uint32_t fd_count = d.raw<uint32_t>();
    BRASA_CHECK(count <= kMaxDescriptors && fd_count == fds.size(), "Queue.get: the message names ",
                fd_count, " descriptors but carries ", fds.size());
    struct Entry {
      AllocationKind kind;
      uint64_t nbytes;
      AllocationHandle cuda;  // a CUDA IPC entry's handle (its descriptor comes later)
    };
    auto carries_fd = [](const Entry& x) {
      return x.kind == AllocationKind::Memfd || x.kind == AllocationKind::CUDAIpc;
    };
    std::vector<Entry> entries(count);
    for (Entry& entry : entries) {
      entry.kind = static_cast<AllocationKind>(d.raw<uint8_t>());
      entry.nbytes = d.raw<uint64_t>();
      BRASA_CHECK(entry.kind == AllocationKind::Memfd ||
                      entry.kind == AllocationKind::NamedSegment ||
                      entry.kind == AllocationKind::CUDAIpc,
                  "Queue.get: unknown storage kind (malformed message)");
      if (entry.kind == AllocationKind::NamedSegment) names.push_back(d.text());
      if (entry.kind == AllocationKind::CUDAIpc) {
        entry.cuda.kind = AllocationKind::CUDAIpc;
        entry.cuda.name = d.text();
        entry.cuda.device = Device(kCUDA, d.raw<int8_t>());
        entry.cuda.offset = d.raw<uint64_t>();
        entry.cuda.nbytes = entry.nbytes;
      }
    }
    BRASA_CHECK(static_cast<size_t>(std::count_if(entries.begin(), entries.end(), carries_fd)) ==
                    fds.size(),
                "Queue.get: the storage list does not match the descriptors");
    for (Entry& entry : entries) {
      if (entry.kind == AllocationKind::Memfd) {
        d.storages.push_back(received_memfd(fds[fds_owned++], entry.nbytes));
      } else if (entry.kind == AllocationKind::CUDAIpc) {
        entry.cuda.fd = fds[fds_owned++];  // owned by the import from here on
        d.storages.push_back(Storage::from_handle(entry.cuda));
      } else {
        d.storages.push_back(received_segment(names[names_owned], entry.nbytes, keeper_, sender));
        ++names_owned;
      }
    }
    IValue v = d.value();
    BRASA_CHECK(d.p == d.end, "Queue.get: ", d.end - d.p, " bytes left after the message");
    return v;
  } catch (...) {
    for (size_t i = fds_owned; i < fds.size(); ++i) close(fds[i]);
    for (size_t i = names_owned; i < names.size(); ++i)
      detail::drop_transfer_hold(names[i], keeper_, sender);
    throw;
  }
}

IValue Queue::get(std::optional<std::chrono::milliseconds> timeout) {
  const auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                                : std::chrono::steady_clock::time_point::max();
  // Waits in slices, so that a process this one started that died (the
  // producer, most likely) is an error within a slice instead of a hang.
  constexpr std::chrono::milliseconds kSlice(100);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    left = std::max(std::chrono::milliseconds(0), std::min(left, kSlice));
    if (wait_ready(recv_fd_, POLLIN, left, "Queue.get")) {
      // Another process may take the message first: then wait again.
      if (auto v = get_nowait()) return std::move(*v);
      continue;
    }
    if (auto failure = detail::peer_failure())
      BRASA_ERROR("Queue.get: ", *failure, " while this process waited for a message");
    BRASA_CHECK(std::chrono::steady_clock::now() < deadline, "Queue.get: timed out after ",
                timeout ? timeout->count() : 0, " ms with no message");
  }
}

}  // namespace brasa::multiprocessing
