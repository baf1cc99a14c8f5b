#include "shm_p2p.h"

#include <brasa/comm/errors.h>
#include <brasa/comm/staging.h>

#include <algorithm>
#include <cstring>

namespace brasa::distributed {

using shm_detail::FutexWord;
using shm_detail::RingHead;

namespace {

constexpr auto kSleepSlice = std::chrono::milliseconds(50);

struct MessageHeader {
  int32_t tag = 0;
  int32_t unused = 0;
  uint64_t size = 0;
};
static_assert(sizeof(MessageHeader) == 16);

struct Ring {
  RingHead* ends;
  char* data;
  uint64_t capacity;

  void put(uint64_t at, const char* src, uint64_t n) const {
    const uint64_t pos = at % capacity, first = std::min(n, capacity - pos);
    std::memcpy(data + pos, src, first);
    if (n > first) std::memcpy(data, src + first, n - first);
  }
  void take(uint64_t at, char* dst, uint64_t n) const {
    const uint64_t pos = at % capacity, first = std::min(n, capacity - pos);
    if (dst) {
      std::memcpy(dst, data + pos, first);
      if (n > first) std::memcpy(dst + first, data, n - first);
    }
  }
};

Ring ring(const shm_detail::Group& g, int writer, int reader) {
  char* base = g.peers[static_cast<size_t>(writer)].rings +
               static_cast<size_t>(reader) * g.layout.ring_stride;
  return Ring{reinterpret_cast<RingHead*>(base), base + sizeof(RingHead), g.layout.ring_bytes};
}

void ring_bell(FutexWord& bell) {
  bell.value.fetch_add(1, std::memory_order_seq_cst);
  if (bell.sleepers.load(std::memory_order_seq_cst) != 0) shm_detail::futex_wake_all(&bell.value);
}

std::exception_ptr error(const std::string& text) {
  return std::make_exception_ptr(DistError(text, "", __FILE__, __LINE__));
}

}  // namespace

ProcessGroupShm::P2P::P2P(shm_detail::Group& group)
    : g(group), sends(static_cast<size_t>(group.size)), incoming(static_cast<size_t>(group.size)) {}

ProcessGroupShm::P2P::~P2P() {
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
  }
  ring_own_bell();
  if (thread.joinable()) thread.join();
}

void ProcessGroupShm::P2P::ring_own_bell() {
  ring_bell(g.peers[static_cast<size_t>(g.rank)].head->bell);
}

void ProcessGroupShm::P2P::finish(const std::shared_ptr<Op>& op, std::exception_ptr err) {
  if (!err) detail::unstage(op->target, op->staging);
  op->work->finish(err);
}

void ProcessGroupShm::P2P::post(const std::shared_ptr<Op>& op, bool is_send) {
  std::lock_guard<std::mutex> lock(mu);
  if (!thread.joinable()) thread = std::thread([this] { loop(); });
  if (is_send) {
    sends[static_cast<size_t>(op->peer)].push_back(op);
    ring_own_bell();
    return;
  }
  const uint64_t want = op->staging.nbytes();
  for (auto it = early.begin(); it != early.end(); ++it) {
    if (it->waiting || it->tag != op->tag || (op->peer >= 0 && it->source != op->peer)) continue;
    op->work->set_source_rank(it->source);
    const bool complete = it->got == it->bytes.size();
    if (it->bytes.size() != want) {
      finish(op,
             error("ProcessGroupShm.recv: rank " + std::to_string(it->source) + " sent " +
                   std::to_string(it->bytes.size()) + " bytes with tag " + std::to_string(op->tag) +
                   " but the receiving tensor holds " + std::to_string(want)));
      if (complete) {
        early.erase(it);
      } else {
        it->tag = -1;  // dropped when it has arrived
      }
      return;
    }
    if (complete) {
      if (want) std::memcpy(op->staging.data_ptr(), it->bytes.data(), want);
      finish(op);
      early.erase(it);
    } else {
      it->waiting = op;
    }
    return;
  }
  receives.push_back(op);
  ring_own_bell();
}

std::shared_ptr<ProcessGroupShm::P2P::Op> ProcessGroupShm::P2P::match_posted(int source, int tag,
                                                                             uint64_t size,
                                                                             bool& refused) {
  refused = false;
  for (auto it = receives.begin(); it != receives.end(); ++it) {
    auto op = *it;
    if (op->tag != tag || (op->peer >= 0 && op->peer != source)) continue;
    receives.erase(it);
    op->work->set_source_rank(source);
    if (op->staging.nbytes() != size) {
      finish(op, error("ProcessGroupShm.recv: rank " + std::to_string(source) + " sent " +
                       std::to_string(size) + " bytes with tag " + std::to_string(tag) +
                       " but the receiving tensor holds " + std::to_string(op->staging.nbytes())));
      refused = true;
      return nullptr;
    }
    return op;
  }
  return nullptr;
}

bool ProcessGroupShm::P2P::pump_send(int dst) {
  auto& queue = sends[static_cast<size_t>(dst)];
  if (queue.empty()) return false;
  auto op = queue.front();
  const Ring r = ring(g, g.rank, dst);
  uint64_t head = r.ends->head.load(std::memory_order_relaxed);
  uint64_t room = r.capacity - (head - r.ends->tail.load(std::memory_order_acquire));
  const uint64_t payload = op->staging.nbytes(), total = sizeof(MessageHeader) + payload;
  const uint64_t start = head;
  if (op->done == 0 && room >= sizeof(MessageHeader)) {
    MessageHeader h;
    h.tag = op->tag;
    h.size = payload;
    r.put(head, reinterpret_cast<const char*>(&h), sizeof h);
    head += sizeof h;
    room -= sizeof h;
    op->done = sizeof h;
  }
  if (op->done >= sizeof(MessageHeader) && op->done < total && room > 0) {
    const uint64_t n = std::min(room, total - op->done);
    r.put(head,
          static_cast<const char*>(op->staging.data_ptr()) + (op->done - sizeof(MessageHeader)), n);
    head += n;
    op->done += n;
  }
  if (head == start) return false;
  r.ends->head.store(head, std::memory_order_release);
  ring_bell(g.peers[static_cast<size_t>(dst)].head->bell);
  if (op->done == total) {
    queue.pop_front();
    op->work->finish();
  }
  return true;
}

bool ProcessGroupShm::P2P::pump_receive(int src) {
  const Ring r = ring(g, src, g.rank);
  uint64_t tail = r.ends->tail.load(std::memory_order_relaxed);
  uint64_t avail = r.ends->head.load(std::memory_order_acquire) - tail;
  const uint64_t start = tail;
  Incoming& in = incoming[static_cast<size_t>(src)];
  while (avail > 0) {
    if (!in.active) {
      if (avail < sizeof(MessageHeader)) break;  // written whole: cannot happen
      MessageHeader h;
      r.take(tail, reinterpret_cast<char*>(&h), sizeof h);
      tail += sizeof h;
      avail -= sizeof h;
      in = Incoming();
      in.active = true;
      in.tag = h.tag;
      in.size = h.size;
      bool refused = false;
      in.recv = match_posted(src, h.tag, h.size, refused);
      in.discard = refused;
      if (!in.recv && !refused) {
        early.push_back(Early());
        early.back().source = src;
        early.back().tag = h.tag;
        early.back().bytes.resize(h.size);
        in.early = std::prev(early.end());
      }
    }
    const uint64_t n = std::min(avail, in.size - in.got);
    char* dst = nullptr;
    if (in.recv) {
      dst = static_cast<char*>(in.recv->staging.data_ptr()) + in.got;
    } else if (!in.discard) {
      dst = in.early->bytes.data() + in.got;
    }
    r.take(tail, dst, n);
    tail += n;
    avail -= n;
    in.got += n;
    if (!in.recv && !in.discard) in.early->got = in.got;
    if (in.got < in.size) continue;
    if (in.recv) {
      finish(in.recv);
    } else if (!in.discard) {
      auto e = in.early;
      if (e->waiting) {
        if (e->got) std::memcpy(e->waiting->staging.data_ptr(), e->bytes.data(), e->got);
        finish(e->waiting);
        early.erase(e);
      } else if (e->tag < 0) {
        early.erase(e);
      }
    }
    in = Incoming();
  }
  if (tail == start) return false;
  r.ends->tail.store(tail, std::memory_order_release);
  ring_bell(g.peers[static_cast<size_t>(src)].head->bell);
  return true;
}

void ProcessGroupShm::P2P::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu);
  const std::string text = "ProcessGroupShm: this group can no longer be used: " + reason;
  for (auto& q : sends) {
    for (auto& op : q) finish(op, error(text));
    q.clear();
  }
  for (auto& op : receives) finish(op, error(text));
  receives.clear();
  for (auto& e : early)
    if (e.waiting) finish(e.waiting, error(text));
  early.clear();
  for (auto& in : incoming) {
    if (in.recv) finish(in.recv, error(text));
    in = Incoming();
  }
}

// Fails what waits on a peer that is gone (called with mu held, when idle).
void ProcessGroupShm::P2P::fail_stranded() {
  for (int p = 0; p < g.size; ++p) {
    if (p == g.rank) continue;
    const std::string gone = g.peer_failure(p);
    if (gone.empty()) continue;
    auto& q = sends[static_cast<size_t>(p)];
    for (auto& op : q) finish(op, error("ProcessGroupShm.send: " + gone));
    q.clear();
    Incoming& in = incoming[static_cast<size_t>(p)];
    if (in.recv) finish(in.recv, error("ProcessGroupShm.recv: " + gone));
    if (in.active && !in.recv && !in.discard && in.early->waiting)
      finish(in.early->waiting, error("ProcessGroupShm.recv: " + gone));
    if (in.active && !in.recv && !in.discard) early.erase(in.early);
    in = Incoming();
    for (auto it = receives.begin(); it != receives.end();) {
      if ((*it)->peer == p) {
        finish(*it, error("ProcessGroupShm.recv: " + gone));
        it = receives.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void ProcessGroupShm::P2P::loop() {
  FutexWord& bell = g.peers[static_cast<size_t>(g.rank)].head->bell;
  auto last_check = std::chrono::steady_clock::now();
  for (;;) {
    const uint32_t seen = bell.value.load(std::memory_order_acquire);
    bool progress = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stop) return;
      for (int p = 0; p < g.size; ++p) {
        if (p == g.rank) continue;
        progress |= pump_send(p);
        progress |= pump_receive(p);
      }
      const auto now = std::chrono::steady_clock::now();
      if (!progress && now - last_check >= kSleepSlice) {
        fail_stranded();
        last_check = now;
      }
    }
    if (progress) continue;
    if (g.spin.count() > 0) {
      const auto until = std::chrono::steady_clock::now() + g.spin;
      for (int i = 1; bell.value.load(std::memory_order_acquire) == seen; ++i) {
        shm_detail::cpu_relax();
        if ((i & 63) == 0 && std::chrono::steady_clock::now() > until) break;
      }
      if (bell.value.load(std::memory_order_acquire) != seen) continue;
    }
    bell.sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (bell.value.load(std::memory_order_seq_cst) == seen)
      shm_detail::futex_wait(&bell.value, seen, kSleepSlice);
    bell.sleepers.fetch_sub(1, std::memory_order_seq_cst);
  }
}

// ---- the group's point-to-point calls ----

std::shared_ptr<Work> ProcessGroupShm::post_p2p(const char* op, bool is_send, const Tensor& t,
                                                int peer, int tag) {
  shm_detail::Group* g = p2p_->group();
  if (g->broken)
    BRASA_DIST_THROW(DistError, "ProcessGroupShm.", op,
                     ": this group can no longer be used: ", g->reason());
  BRASA_CHECK(peer != rank(), name(op), ": rank ", rank(), " cannot ",
              is_send ? "send to" : "receive from", " itself");
  BRASA_CHECK(tag >= 0, name(op), ": the tag must be >= 0, got ", tag);
  auto p = std::make_shared<P2P::Op>();
  p->target = t;
  p->staging = detail::staged(t);
  p->peer = peer;
  p->tag = tag;
  p->work = std::make_shared<Work>(op);
  p->work->set_outputs({t});
  auto work = p->work;
  p2p_->post(p, is_send);
  return work;
}

std::shared_ptr<Work> ProcessGroupShm::send(std::vector<Tensor>& tensors, int dst_rank, int tag) {
  const Tensor t = single("send", tensors);
  check_rank("send", "destination", dst_rank);
  return post_p2p("send", true, t, dst_rank, tag);
}

std::shared_ptr<Work> ProcessGroupShm::recv(std::vector<Tensor>& tensors, int src_rank, int tag) {
  const Tensor t = single("recv", tensors);
  check_rank("recv", "source", src_rank);
  return post_p2p("recv", false, t, src_rank, tag);
}

std::shared_ptr<Work> ProcessGroupShm::recv_anysource(std::vector<Tensor>& tensors, int tag) {
  const Tensor t = single("recv_anysource", tensors);
  return post_p2p("recv_anysource", false, t, -1, tag);
}

}  // namespace brasa::distributed
