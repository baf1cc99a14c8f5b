#include "process_group_shm.h"

#include <brasa/comm/errors.h>
#include <brasa/comm/staging.h>
#include <brasa/comm/store/prefix_store.h>
#include <brasa/ops/factory.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "../ordered_jobs.h"
#include "shm_impl.h"
#include "shm_p2p.h"
#include "shm_reduce.h"

namespace brasa::distributed {

using detail::staged;
using detail::unstage;
using shm_detail::env_bytes;

namespace {

// 2 MiB: measured best on a 2-core Zen 4 (smaller rounds cost more in cache
// lines handed between the cores than they gain in overlap).
constexpr size_t kDefaultChunkBytes = 2 << 20;
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Round i of `count` elements taken `chunk` at a time: its first element
// (`off`) and how many it holds (0 past the end).
int64_t span(int64_t count, int64_t chunk, uint64_t i, int64_t& off) {
  off = static_cast<int64_t>(i) * chunk;
  return std::max<int64_t>(0, std::min(chunk, count - off));
}

}  // namespace

// ---- the group ----

struct ProcessGroupShm::Impl {
  std::unique_ptr<shm_detail::Group> group;
  std::unique_ptr<detail::OrderedJobs> jobs;  // the collectives
};

ProcessGroupShm::ProcessGroupShm(std::shared_ptr<Store> store, int rank, int size)
    : ProcessGroupShm(std::move(store), rank, size, Options()) {}

ProcessGroupShm::ProcessGroupShm(std::shared_ptr<Store> store, int rank, int size,
                                 const Options& options)
    : ProcessGroup(rank, size, options.timeout), impl_(std::make_unique<Impl>()) {
  BRASA_CHECK(store != nullptr, "ProcessGroupShm: the store is null");
  size_t chunk = options.chunk_bytes ? options.chunk_bytes
                                     : env_bytes("BRASA_SHM_CHUNK_BYTES", kDefaultChunkBytes);
  BRASA_CHECK(chunk >= 4096 && chunk <= (size_t{1} << 30),
              "ProcessGroupShm: chunk_bytes must be from 4096 to 1 GiB, got ", chunk);
  chunk = shm_detail::align_up(chunk, 64 * static_cast<size_t>(size));
  const char* cma_env = std::getenv("BRASA_SHM_CMA");
  const bool cma = options.cross_memory_attach && !(cma_env && std::string(cma_env) == "0");
  impl_->group =
      std::make_unique<shm_detail::Group>(store, rank, size, chunk, options.timeout, cma);
  impl_->jobs = std::make_unique<detail::OrderedJobs>(options.background_collectives);
  p2p_ = std::make_unique<P2P>(*impl_->group);
}

ProcessGroupShm::~ProcessGroupShm() {
  p2p_.reset();
  impl_->jobs.reset();  // runs what is queued
}

uint64_t ProcessGroupShm::zero_copy_allreduces() const {
  return impl_->group->zero_copy_allreduces.load();
}

uint64_t ProcessGroupShm::cross_memory_allreduces() const {
  return impl_->group->cross_memory_allreduces.load();
}

bool ProcessGroupShm::uses_cross_memory_attach() const { return impl_->group->cma; }

std::vector<int> ProcessGroupShm::pids() const {
  std::vector<int> out;
  for (const auto& p : impl_->group->peers) out.push_back(p.head->pid);
  return out;
}

void ProcessGroupShm::abort() {
  impl_->group->fail("abort() was called on rank " + std::to_string(rank()));
  for (auto& job : impl_->jobs->take_queued()) job();  // each sees the broken flag, fails its Work
  p2p_->abort("abort() was called");
}

std::shared_ptr<Work> ProcessGroupShm::enqueue(const char* op, const Fingerprint& f,
                                               std::chrono::milliseconds timeout,
                                               std::function<void()> body,
                                               std::vector<Tensor> outputs) {
  shm_detail::Group* g = impl_->group.get();
  if (g->broken)
    BRASA_DIST_THROW(DistError, "ProcessGroupShm.", op,
                     ": this group can no longer be used: ", g->reason());
  auto work = std::make_shared<Work>(op);
  work->set_outputs(std::move(outputs));
  auto job = [g, work, f, timeout, body = std::move(body), op]() {
    if (g->broken) {
      work->finish(std::make_exception_ptr(
          DistError(std::string("ProcessGroupShm.") + op +
                        ": this group can no longer be used: " + g->reason(),
                    "", __FILE__, __LINE__)));
      return;
    }
    g->op.name = op;
    g->op.fingerprint = f;
    g->op.timeout = timeout;
    g->op.deadline = std::chrono::steady_clock::now() + timeout;
    try {
      body();
      work->finish();
    } catch (...) {
      work->finish(std::current_exception());
    }
  };
  impl_->jobs->run(std::move(job));
  return work;
}

// ---- collectives ----
//
// Each builds a RoundPlan over raw pointers of contiguous buffers; `es` is
// the element size, chunks and slices count elements.

namespace {
bool broadcast_direct(shm_detail::Group* g, const Tensor& buf, int root);
}  // namespace

std::shared_ptr<Work> ProcessGroupShm::broadcast(std::vector<Tensor>& tensors,
                                                 const BroadcastOptions& opts) {
  const Tensor t = single("broadcast", tensors);
  check_rank("broadcast", "root", opts.rootRank);
  const int root = static_cast<int>(opts.rootRank);
  Tensor buf = staged(t);
  shm_detail::Group* g = impl_->group.get();
  return enqueue("broadcast", next(CollectiveKind::kBroadcast, t, t.numel(), ReduceOp::SUM, root),
                 effective(opts.timeout),
                 [g, t, buf, root] {
                   if (broadcast_direct(g, buf, root)) return unstage(t, buf);
                   const size_t es = buf.element_size();
                   const int64_t n = buf.numel(),
                                 chunk = static_cast<int64_t>(g->layout.chunk_bytes / es);
                   char* base = static_cast<char*>(buf.data_ptr());
                   shm_detail::RoundPlan plan;
                   plan.rounds = static_cast<uint64_t>(ceil_div(n, chunk));
                   plan.write = [=](uint64_t i) {
                     int64_t off;
                     const int64_t m = span(n, chunk, i, off);
                     if (g->rank == root && m > 0)
                       std::memcpy(g->data(g->rank), base + off * es, m * es);
                   };
                   plan.read = [=](uint64_t i) {
                     int64_t off;
                     const int64_t m = span(n, chunk, i, off);
                     if (g->rank != root && m > 0)
                       std::memcpy(base + off * es, g->data(root), m * es);
                   };
                   g->run(plan);
                   unstage(t, buf);
                 },
                 {t});
}

namespace {

// Collectives from these sizes go straight between the ranks' tensors: the
// memfd-backed ones mapped, the private ones by cross-memory attach (CMA).
// With CMA every tensor is reachable, and from 64 KiB that beat the slots
// here. Without it an allreduce tries the mapped path only from 256 KiB: the
// try costs a round when some rank's tensor turns out to be private.
constexpr int64_t kZeroCopyBytes = 256 << 10;
constexpr int64_t kCrossMemoryBytes = 64 << 10;
// Bytes of a slice reduced at a time: the piece read from each private peer
// (one system call) and the reduced piece stay in the core's cache between
// the read, the reduction and the writes back (measured on 2 Emerald Rapids
// cores: 4 MiB of shared tensors 1.4x -> 1.8x MPI's bandwidth against
// reducing the whole slice first; 32 KiB and 512 KiB pieces were slower).
constexpr size_t kPieceBytes = 128 << 10;

// Allreduce straight between the ranks' tensors. Each rank publishes where
// its tensor lives: a memfd (DDP's buckets on this backend, tensors after
// share_memory_()) that peers map once and keep, or only its address. In the
// round that publishes them, each rank reduces its slice straight out of all
// tensors and writes the result into every one of them — memcpy for mapped
// tensors, process_vm_readv/writev for private ones. A last round keeps every
// tensor untouched until no peer reads or writes it any more. No staging
// copy, two synchronisations. Returns false (having changed nothing) when
// some rank's tensor can be reached neither way.
bool allreduce_direct(shm_detail::Group* g, const Tensor& buf, ReduceOp op) {
  const int P = g->size, me = g->rank;
  const size_t es = buf.element_size();
  const int64_t n = buf.numel();
  char* base = static_cast<char*>(buf.data_ptr());
  shm_detail::ExposedBuffer mine;
  shm_detail::Group::expose(buf, mine);
  mine.address = reinterpret_cast<uintptr_t>(base);
  bool reachable = true, all_mapped = true;
  shm_detail::RoundPlan plan;
  plan.rounds = 1;
  plan.buffer = &mine;
  plan.read = [&](uint64_t) {
    for (int p = 0; p < P; ++p) all_mapped = all_mapped && g->header(p)->buffer.fd >= 0;
    reachable = all_mapped || g->cma;
    if (!reachable) return;
    // Peer p's tensor: mapped here (at[p]) or private at address addr[p].
    std::vector<char*> at(static_cast<size_t>(P), nullptr);
    std::vector<uint64_t> addr(static_cast<size_t>(P), 0);
    for (int p = 0; p < P; ++p) {
      const shm_detail::ExposedBuffer& e = g->header(p)->buffer;
      if (p == me)
        at[static_cast<size_t>(p)] = base;
      else if (e.fd >= 0)
        at[static_cast<size_t>(p)] = g->peer_buffer(p, e);
      addr[static_cast<size_t>(p)] = e.address;
    }
    // This rank's slice: no other rank reads or writes it in this round.
    const int64_t s = ceil_div(n, P);
    const int64_t first = std::min<int64_t>(me * s, n), len = std::min<int64_t>(s, n - first);
    const int64_t piece = static_cast<int64_t>(kPieceBytes / es);
    if (!all_mapped && g->scratch.size() < kPieceBytes * static_cast<size_t>(P))
      g->scratch.resize(kPieceBytes * static_cast<size_t>(P));
    std::vector<const void*> in(static_cast<size_t>(P));
    for (int64_t c = first; c < first + len; c += piece) {
      const int64_t m = std::min(piece, first + len - c);
      const size_t bytes = static_cast<size_t>(m) * es, at_c = static_cast<size_t>(c) * es;
      for (int p = 0; p < P; ++p) {
        const size_t q = static_cast<size_t>(p);
        if (at[q]) {
          in[q] = at[q] + at_c;
        } else {
          char* into = g->scratch.data() + q * kPieceBytes;
          g->peer_read(p, addr[q] + at_c, into, bytes);
          in[q] = into;
        }
      }
      shm_detail::reduce_into(base + at_c, in.data(), P, m, buf.scalar_type(), op);
      for (int p = 0; p < P; ++p) {
        const size_t q = static_cast<size_t>(p);
        if (p == me) continue;
        if (at[q])
          std::memcpy(at[q] + at_c, base + at_c, bytes);
        else
          g->peer_write(p, addr[q] + at_c, base + at_c, bytes);
      }
    }
  };
  g->run(plan);
  if (!reachable) return false;
  g->run(shm_detail::RoundPlan());
  ++(all_mapped ? g->zero_copy_allreduces : g->cross_memory_allreduces);
  return true;
}

// Bytes [at, at + bytes) of the tensor peer p published this round: in
// place when it is mapped here, else read into `scratch`.
const char* peer_bytes(shm_detail::Group* g, int p, size_t at, char* scratch, size_t bytes) {
  const shm_detail::ExposedBuffer& e = g->header(p)->buffer;
  if (e.fd >= 0) return g->peer_buffer(p, e) + at;
  g->peer_read(p, e.address + at, scratch, bytes);
  return scratch;
}

// Copies between this rank and the tensor peer p published this round, at
// byte offset `at`: memcpy through the mapping when the tensor is in shared
// memory, process_vm_readv/writev otherwise.
void read_peer(shm_detail::Group* g, int p, size_t at, char* to, size_t bytes) {
  if (bytes == 0) return;
  const shm_detail::ExposedBuffer& e = g->header(p)->buffer;
  if (e.fd >= 0)
    std::memcpy(to, g->peer_buffer(p, e) + at, bytes);
  else
    g->peer_read(p, e.address + at, to, bytes);
}
void write_peer(shm_detail::Group* g, int p, size_t at, const char* from, size_t bytes) {
  if (bytes == 0) return;
  const shm_detail::ExposedBuffer& e = g->header(p)->buffer;
  if (e.fd >= 0)
    std::memcpy(g->peer_buffer(p, e) + at, from, bytes);
  else
    g->peer_write(p, e.address + at, from, bytes);
}

// What this rank publishes for a direct collective: its tensor's memfd when
// it has one, and its address.
shm_detail::ExposedBuffer publish(const Tensor& t) {
  shm_detail::ExposedBuffer e;
  shm_detail::Group::expose(t, e);
  e.address = reinterpret_cast<uintptr_t>(t.data_ptr());
  return e;
}

// Runs `copy` in a round that publishes `t`, then a closing round that keeps
// every published tensor untouched until no peer reads or writes it.
void run_direct(shm_detail::Group* g, const Tensor& t, const std::function<void()>& copy) {
  const shm_detail::ExposedBuffer mine = publish(t);
  shm_detail::RoundPlan plan;
  plan.rounds = 1;
  plan.buffer = &mine;
  plan.read = [&](uint64_t) { copy(); };
  g->run(plan);
  g->run(shm_detail::RoundPlan());
}

// Whether a collective of `bytes` per rank goes straight between the ranks'
// tensors (the same answer on every rank).
bool goes_direct(const shm_detail::Group* g, int64_t bytes) {
  return g->cma && bytes >= kCrossMemoryBytes;
}

// Broadcast straight between the ranks' tensors: each receiver copies the
// first (P-1)/P of the root's tensor while the root writes the last 1/P into
// every receiver's (so that the root's core works too). One copy instead of
// two through the slots.
bool broadcast_direct(shm_detail::Group* g, const Tensor& buf, int root) {
  const size_t es = buf.element_size();
  const int64_t n = buf.numel();
  if (!goes_direct(g, n * static_cast<int64_t>(es))) return false;
  const int P = g->size;
  const size_t head = static_cast<size_t>(n - n / P) * es, all = static_cast<size_t>(n) * es;
  char* base = static_cast<char*>(buf.data_ptr());
  run_direct(g, buf, [&] {
    if (g->rank != root) return read_peer(g, root, 0, base, head);
    for (int r = 0; r < P; ++r)
      if (r != root) write_peer(g, r, head, base + head, all - head);
  });
  return true;
}

// In-place allreduce (or reduce to `root` when root >= 0) of a contiguous buffer.
void allreduce_buffer(shm_detail::Group* g, const Tensor& buf, ReduceOp op, int root) {
  const ScalarType dtype = buf.scalar_type();
  const size_t es = buf.element_size();
  const int P = g->size, me = g->rank;
  const int64_t n = buf.numel(), chunk = static_cast<int64_t>(g->layout.chunk_bytes / es);
  char* base = static_cast<char*>(buf.data_ptr());
  const bool gets_result = root < 0 || root == me;
  if (root < 0 && n * static_cast<int64_t>(es) >= (g->cma ? kCrossMemoryBytes : kZeroCopyBytes) &&
      allreduce_direct(g, buf, op))
    return;
  shm_detail::RoundPlan plan;
  plan.rounds = static_cast<uint64_t>(ceil_div(n, chunk));
  // Direct: every rank (or the root) reduces the whole chunk from all slots:
  // one synchronisation per round. Otherwise a reduce-scatter then a gather of
  // the reduced slices: each rank reads each element once (2 steps).
  const bool direct = n * static_cast<int64_t>(es) <= g->direct_bytes;
  if (direct) {
    plan.write = [=](uint64_t i) {
      int64_t off;
      const int64_t m = span(n, chunk, i, off);
      if (m > 0) std::memcpy(g->data(me), base + off * es, m * es);
    };
    plan.read = [=](uint64_t i) {
      int64_t off;
      const int64_t m = span(n, chunk, i, off);
      if (!gets_result || m <= 0) return;
      std::vector<const void*> in(static_cast<size_t>(P));
      for (int p = 0; p < P; ++p)
        in[static_cast<size_t>(p)] = p == me ? base + off * es : g->data(p);
      shm_detail::reduce_into(base + off * es, in.data(), P, m, dtype, op);
    };
    g->run(plan);
    return;
  }
  // Slice p of a round's m elements: [p * s, min((p + 1) * s, m)).
  auto slice = [=](int64_t m, int p, int64_t& at) {
    const int64_t s = ceil_div(m, P);
    at = std::min<int64_t>(p * s, m);
    return std::min<int64_t>(s, m - at);
  };
  plan.write = [=](uint64_t i) {
    int64_t off;
    const int64_t m = span(n, chunk, i, off);
    for (int p = 0; p < P; ++p) {  // this rank's own slice is read from `base` directly
      int64_t at;
      const int64_t len = slice(m, p, at);
      if (p != me && len > 0) std::memcpy(g->data(me) + at * es, base + (off + at) * es, len * es);
    }
  };
  plan.middle = [=](uint64_t i) {
    int64_t off, at;
    const int64_t len = slice(span(n, chunk, i, off), me, at);
    if (len <= 0) return;
    std::vector<const void*> in(static_cast<size_t>(P));
    for (int p = 0; p < P; ++p)
      in[static_cast<size_t>(p)] = p == me ? base + (off + at) * es : g->data(p) + at * es;
    char* reduced = g->data(me) + at * es;
    shm_detail::reduce_into(reduced, in.data(), P, len, dtype, op);
    if (gets_result) std::memcpy(base + (off + at) * es, reduced, len * es);
  };
  plan.read = [=](uint64_t i) {
    if (!gets_result) return;
    int64_t off;
    const int64_t m = span(n, chunk, i, off);
    for (int p = 0; p < P; ++p) {
      int64_t at;
      const int64_t len = slice(m, p, at);
      if (p != me && len > 0) std::memcpy(base + (off + at) * es, g->data(p) + at * es, len * es);
    }
  };
  g->run(plan);
}

}  // namespace

std::shared_ptr<Work> ProcessGroupShm::allreduce(std::vector<Tensor>& tensors,
                                                 const AllreduceOptions& opts) {
  const Tensor t = single("allreduce", tensors);
  check_reduce_op("allreduce", opts.reduceOp, t.scalar_type());
  Tensor buf = staged(t);
  const ReduceOp op = opts.reduceOp;
  shm_detail::Group* g = impl_->group.get();
  return enqueue("allreduce", next(CollectiveKind::kAllreduce, t, t.numel(), op),
                 effective(opts.timeout),
                 [g, t, buf, op] {
                   allreduce_buffer(g, buf, op, -1);
                   unstage(t, buf);
                 },
                 {t});
}

std::shared_ptr<Work> ProcessGroupShm::allreduce_coalesced(std::vector<Tensor>& tensors,
                                                           const AllreduceCoalescedOptions& opts) {
  check_coalesced("allreduce_coalesced", tensors, opts.reduceOp);
  Tensor flat = detail::flat_cat(tensors);
  const ReduceOp op = opts.reduceOp;
  std::vector<Tensor> targets = tensors;
  shm_detail::Group* g = impl_->group.get();
  return enqueue(
      "allreduce_coalesced", next(CollectiveKind::kAllreduceCoalesced, flat, flat.numel(), op),
      effective(opts.timeout),
      [g, targets, flat, op] {
        allreduce_buffer(g, flat, op, -1);
        detail::scatter_back(targets, flat);
      },
      targets);
}

std::shared_ptr<Work> ProcessGroupShm::reduce(std::vector<Tensor>& tensors,
                                              const ReduceOptions& opts) {
  const Tensor t = single("reduce", tensors);
  check_rank("reduce", "root", opts.rootRank);
  check_reduce_op("reduce", opts.reduceOp, t.scalar_type());
  const int root = static_cast<int>(opts.rootRank);
  Tensor buf = staged(t);
  const ReduceOp op = opts.reduceOp;
  shm_detail::Group* g = impl_->group.get();
  return enqueue("reduce", next(CollectiveKind::kReduce, t, t.numel(), op, root),
                 effective(opts.timeout),
                 [g, t, buf, op, root] {
                   allreduce_buffer(g, buf, op, root);
                   if (g->rank == root) unstage(t, buf);
                 },
                 {t});
}

namespace {

// Gather straight out of the ranks' inputs: each receiving rank copies every
// peer's input into its output (one copy instead of two through the slots).
bool gather_direct(shm_detail::Group* g, const Tensor& in, const std::vector<char*>& outs,
                   int root) {
  const size_t bytes = static_cast<size_t>(in.numel()) * in.element_size();
  if (!goes_direct(g, static_cast<int64_t>(bytes))) return false;
  run_direct(g, in, [&] {
    if (root >= 0 && root != g->rank) return;
    for (int p = 0; p < g->size; ++p) {
      char* to = outs[static_cast<size_t>(p)];
      if (p == g->rank) {
        if (to != in.data_ptr()) std::memcpy(to, in.data_ptr(), bytes);  // in place: already there
      } else
        read_peer(g, p, 0, to, bytes);
    }
  });
  return true;
}

// Rank p's n elements at `in` land at outs[p] on every rank (or on the root
// only when root >= 0).
void gather_buffers(shm_detail::Group* g, const Tensor& input, const std::vector<char*>& outs,
                    int root) {
  if (gather_direct(g, input, outs, root)) return;
  const char* in = static_cast<const char*>(input.data_ptr());
  const int64_t n = input.numel();
  const size_t es = input.element_size();
  const int me = g->rank;
  const int64_t chunk = static_cast<int64_t>(g->layout.chunk_bytes / es);
  const bool gets_result = root < 0 || root == me;
  shm_detail::RoundPlan plan;
  plan.rounds = static_cast<uint64_t>(ceil_div(n, chunk));
  plan.write = [=](uint64_t i) {
    int64_t off;
    const int64_t m = span(n, chunk, i, off);
    if (m > 0 && !(root == me)) std::memcpy(g->data(me), in + off * es, m * es);
  };
  plan.read = [=, &outs](uint64_t i) {
    int64_t off;
    const int64_t m = span(n, chunk, i, off);
    if (!gets_result || m <= 0) return;
    for (int p = 0; p < g->size; ++p) {
      char* to = outs[static_cast<size_t>(p)] + off * es;
      const char* from = p == me ? in + off * es : g->data(p);
      if (to != from) std::memcpy(to, from, m * es);  // in place: already there
    }
  };
  g->run(plan);
}

std::vector<char*> pointers(const std::vector<Tensor>& ts) {
  std::vector<char*> out;
  for (const auto& t : ts) out.push_back(static_cast<char*>(t.data_ptr()));
  return out;
}

std::vector<Tensor> staged_all(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const auto& t : ts) out.push_back(staged(t));
  return out;
}

void unstage_all(const std::vector<Tensor>& targets, const std::vector<Tensor>& bufs) {
  for (size_t i = 0; i < targets.size(); ++i) unstage(targets[i], bufs[i]);
}

}  // namespace

std::shared_ptr<Work> ProcessGroupShm::allgather(std::vector<std::vector<Tensor>>& outputs,
                                                 std::vector<Tensor>& inputs,
                                                 const AllgatherOptions& opts) {
  const Tensor in = staged(single("allgather", inputs, "inputs"));
  check_one_list("allgather", outputs, in, "outputs");
  std::vector<Tensor> targets = outputs[0], bufs = staged_all(targets);
  shm_detail::Group* g = impl_->group.get();
  return enqueue(
      "allgather", next(CollectiveKind::kAllgather, in, in.numel()), effective(opts.timeout),
      [g, in, targets, bufs] {
        gather_buffers(g, in, pointers(bufs), -1);
        unstage_all(targets, bufs);
      },
      targets);
}

std::shared_ptr<Work> ProcessGroupShm::allgather_into_tensor(Tensor& output, Tensor& input,
                                                             const AllgatherOptions& opts) {
  std::vector<Tensor> in_list{input};
  const Tensor in = staged(single("allgather_into_tensor", in_list, "input"));
  check_blocks("allgather_into_tensor", output, in, "output");
  Tensor target = output, out = staged(output);
  shm_detail::Group* g = impl_->group.get();
  return enqueue("allgather_into_tensor",
                 next(CollectiveKind::kAllgatherIntoTensor, in, in.numel()),
                 effective(opts.timeout),
                 [g, in, out, target] {
                   const size_t es = in.element_size();
                   std::vector<char*> outs;
                   for (int p = 0; p < g->size; ++p)
                     outs.push_back(static_cast<char*>(out.data_ptr()) + p * in.numel() * es);
                   gather_buffers(g, in, outs, -1);
                   unstage(target, out);
                 },
                 {target});
}

std::shared_ptr<Work> ProcessGroupShm::gather(std::vector<std::vector<Tensor>>& outputs,
                                              std::vector<Tensor>& inputs,
                                              const GatherOptions& opts) {
  const Tensor in = staged(single("gather", inputs, "inputs"));
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = check_root_list("gather", outputs, in, opts.rootRank, "outputs");
  std::vector<Tensor> targets, bufs;
  if (is_root) {
    targets = outputs[0];
    bufs = staged_all(targets);
  }
  shm_detail::Group* g = impl_->group.get();
  return enqueue(
      "gather", next(CollectiveKind::kGather, in, in.numel(), ReduceOp::SUM, root),
      effective(opts.timeout),
      [g, in, targets, bufs, root] {
        std::vector<char*> outs = pointers(bufs);
        outs.resize(static_cast<size_t>(g->size), nullptr);
        gather_buffers(g, in, outs, root);
        unstage_all(targets, bufs);
      },
      targets);
}

std::shared_ptr<Work> ProcessGroupShm::scatter(std::vector<Tensor>& outputs,
                                               std::vector<std::vector<Tensor>>& inputs,
                                               const ScatterOptions& opts) {
  const Tensor target = single("scatter", outputs, "outputs");
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = check_root_list("scatter", inputs, target, opts.rootRank, "inputs");
  std::vector<Tensor> sources;
  if (is_root) sources = staged_all(inputs[0]);
  Tensor out = staged(target);
  shm_detail::Group* g = impl_->group.get();
  return enqueue("scatter",
                 next(CollectiveKind::kScatter, target, target.numel(), ReduceOp::SUM, root),
                 effective(opts.timeout),
                 [g, target, out, sources, root] {
                   const int me = g->rank, P = g->size;
                   const size_t es = out.element_size();
                   const int64_t n = out.numel(), piece = g->piece_elements(es);
                   char* dst = static_cast<char*>(out.data_ptr());
                   std::vector<char*> src = pointers(sources);
                   shm_detail::RoundPlan plan;
                   plan.rounds = static_cast<uint64_t>(ceil_div(n, piece));
                   plan.write = [=, &src](uint64_t i) {
                     int64_t off;
                     const int64_t m = span(n, piece, i, off);
                     if (me != root || m <= 0) return;
                     for (int p = 0; p < P; ++p)
                       if (p != me)
                         std::memcpy(g->data(me) + p * piece * es,
                                     src[static_cast<size_t>(p)] + off * es, m * es);
                   };
                   plan.read = [=, &src](uint64_t i) {
                     int64_t off;
                     const int64_t m = span(n, piece, i, off);
                     if (m <= 0) return;
                     const char* from = me == root ? src[static_cast<size_t>(me)] + off * es
                                                   : g->data(root) + me * piece * es;
                     std::memcpy(dst + off * es, from, m * es);
                   };
                   g->run(plan);
                   unstage(target, out);
                 },
                 {target});
}

namespace {

// reduce_scatter_tensor straight out of the ranks' inputs: each rank reduces
// its block of every peer's input, a piece at a time, into its output.
bool reduce_scatter_direct(shm_detail::Group* g, const Tensor& in, char* out, int64_t n,
                           ScalarType dtype, ReduceOp op) {
  const size_t es = elementSize(dtype);
  if (!goes_direct(g, n * static_cast<int64_t>(es))) return false;
  const int P = g->size, me = g->rank;
  const char* base = static_cast<const char*>(in.data_ptr());
  run_direct(g, in, [&] {
    const int64_t piece = static_cast<int64_t>(kPieceBytes / es);
    if (g->scratch.size() < kPieceBytes * static_cast<size_t>(P))
      g->scratch.resize(kPieceBytes * static_cast<size_t>(P));
    std::vector<const void*> srcs(static_cast<size_t>(P));
    for (int64_t c = 0; c < n; c += piece) {
      const size_t bytes = static_cast<size_t>(std::min(piece, n - c)) * es;
      const size_t at = static_cast<size_t>(me * n + c) * es;
      for (int p = 0; p < P; ++p)
        srcs[static_cast<size_t>(p)] =
            p == me ? base + at : peer_bytes(g, p, at, g->scratch.data() + p * kPieceBytes, bytes);
      shm_detail::reduce_into(out + c * static_cast<int64_t>(es), srcs.data(), P,
                              std::min(piece, n - c), dtype, op);
    }
  });
  return true;
}

// Rank r's output (n elements) receives the reduction over ranks of their
// blocks[r].
void reduce_scatter_buffers(shm_detail::Group* g, const std::vector<const char*>& blocks, char* out,
                            int64_t n, ScalarType dtype, ReduceOp op) {
  const int me = g->rank, P = g->size;
  const size_t es = elementSize(dtype);
  const int64_t piece = g->piece_elements(es);
  shm_detail::RoundPlan plan;
  plan.rounds = static_cast<uint64_t>(ceil_div(n, piece));
  plan.write = [=, &blocks](uint64_t i) {
    int64_t off;
    const int64_t m = span(n, piece, i, off);
    if (m <= 0) return;
    for (int p = 0; p < P; ++p)
      if (p != me)
        std::memcpy(g->data(me) + p * piece * es, blocks[static_cast<size_t>(p)] + off * es,
                    m * es);
  };
  plan.read = [=, &blocks](uint64_t i) {
    int64_t off;
    const int64_t m = span(n, piece, i, off);
    if (m <= 0) return;
    std::vector<const void*> in(static_cast<size_t>(P));
    for (int p = 0; p < P; ++p)
      in[static_cast<size_t>(p)] =
          p == me ? blocks[static_cast<size_t>(me)] + off * es : g->data(p) + me * piece * es;
    shm_detail::reduce_into(out + off * es, in.data(), P, m, dtype, op);
  };
  g->run(plan);
}

}  // namespace

std::shared_ptr<Work> ProcessGroupShm::reduce_scatter(std::vector<Tensor>& outputs,
                                                      std::vector<std::vector<Tensor>>& inputs,
                                                      const ReduceScatterOptions& opts) {
  const Tensor target = single("reduce_scatter", outputs, "outputs");
  check_reduce_op("reduce_scatter", opts.reduceOp, target.scalar_type());
  check_one_list("reduce_scatter", inputs, target, "inputs");
  std::vector<Tensor> sources = staged_all(inputs[0]);
  Tensor out = staged(target);
  const ReduceOp op = opts.reduceOp;
  shm_detail::Group* g = impl_->group.get();
  return enqueue("reduce_scatter", next(CollectiveKind::kReduceScatter, target, target.numel(), op),
                 effective(opts.timeout),
                 [g, target, out, sources, op] {
                   std::vector<const char*> blocks;
                   for (const auto& s : sources)
                     blocks.push_back(static_cast<const char*>(s.data_ptr()));
                   reduce_scatter_buffers(g, blocks, static_cast<char*>(out.data_ptr()),
                                          out.numel(), out.scalar_type(), op);
                   unstage(target, out);
                 },
                 {target});
}

std::shared_ptr<Work> ProcessGroupShm::reduce_scatter_tensor(Tensor& output, Tensor& input,
                                                             const ReduceScatterOptions& opts) {
  std::vector<Tensor> out_list{output};
  const Tensor target = single("reduce_scatter_tensor", out_list, "output");
  check_reduce_op("reduce_scatter_tensor", opts.reduceOp, target.scalar_type());
  check_blocks("reduce_scatter_tensor", input, target, "input");
  Tensor in = staged(input), out = staged(target);
  const ReduceOp op = opts.reduceOp;
  shm_detail::Group* g = impl_->group.get();
  return enqueue("reduce_scatter_tensor",
                 next(CollectiveKind::kReduceScatterTensor, target, target.numel(), op),
                 effective(opts.timeout),
                 [g, target, in, out, op] {
                   const int64_t n = out.numel();
                   if (reduce_scatter_direct(g, in, static_cast<char*>(out.data_ptr()), n,
                                             out.scalar_type(), op))
                     return unstage(target, out);
                   std::vector<const char*> blocks;
                   for (int p = 0; p < g->size; ++p)
                     blocks.push_back(static_cast<const char*>(in.data_ptr()) +
                                      p * n * static_cast<int64_t>(out.element_size()));
                   reduce_scatter_buffers(g, blocks, static_cast<char*>(out.data_ptr()), n,
                                          out.scalar_type(), op);
                   unstage(target, out);
                 },
                 {target});
}

namespace {

// Rank s's send[d] elements at from[d] land at rank d's to[s] (recv[s]
// elements there); the counts are checked against each other.
void alltoall_buffers(shm_detail::Group* g, const std::vector<const char*>& from,
                      const std::vector<int64_t>& send, const std::vector<char*>& to,
                      const std::vector<int64_t>& recv, size_t es) {
  const int me = g->rank, P = g->size;
  const int64_t piece = g->piece_elements(es);
  shm_detail::RoundPlan plan;
  int64_t most = 0;
  for (int64_t c : send) most = std::max(most, c);
  plan.rounds = static_cast<uint64_t>(ceil_div(most, piece));
  plan.counts = send.data();
  plan.write = [=, &from, &send](uint64_t i) {
    for (int p = 0; p < P; ++p) {
      int64_t off;
      const int64_t m = span(send[static_cast<size_t>(p)], piece, i, off);
      if (p != me && m > 0)
        std::memcpy(g->data(me) + p * piece * es, from[static_cast<size_t>(p)] + off * es, m * es);
    }
  };
  plan.read = [=, &from, &send, &to, &recv](uint64_t i) {
    if (i == 0) {
      for (int p = 0; p < P; ++p) {
        const int64_t theirs =
            p == me ? send[static_cast<size_t>(me)] : g->counts(p)[static_cast<size_t>(me)];
        if (theirs != recv[static_cast<size_t>(p)]) {
          const std::string text = "ProcessGroupShm." + std::string(g->op.name) + ": rank " +
                                   std::to_string(p) + " sends " + std::to_string(theirs) +
                                   " elements to rank " + std::to_string(me) + ", which expects " +
                                   std::to_string(recv[static_cast<size_t>(p)]);
          g->fail(text);
          BRASA_DIST_THROW(DistError, text, "; the group can no longer be used");
        }
      }
    }
    for (int p = 0; p < P; ++p) {
      int64_t off;
      const int64_t m = span(recv[static_cast<size_t>(p)], piece, i, off);
      if (m <= 0) continue;
      const char* src =
          p == me ? from[static_cast<size_t>(me)] + off * es : g->data(p) + me * piece * es;
      std::memcpy(to[static_cast<size_t>(p)] + off * es, src, m * es);
    }
  };
  g->run(plan);
}

}  // namespace

std::shared_ptr<Work> ProcessGroupShm::alltoall_base(Tensor& output, Tensor& input,
                                                     std::vector<int64_t>& output_split_sizes,
                                                     std::vector<int64_t>& input_split_sizes,
                                                     const AllToAllOptions& opts) {
  std::vector<int64_t> send, recv;
  check_alltoall_base(output, input, output_split_sizes, input_split_sizes, send, recv);
  const Tensor src = input, target = output;
  Tensor in = staged(src), out = staged(target);
  shm_detail::Group* g = impl_->group.get();
  // Sizes may differ between ranks; only the kind and dtype are compared.
  return enqueue("alltoall_base", next(CollectiveKind::kAlltoallBase, src, -1),
                 effective(opts.timeout),
                 [g, in, out, target, send, recv] {
                   const size_t es = in.element_size();
                   std::vector<const char*> from;
                   std::vector<char*> to;
                   int64_t at = 0;
                   for (int64_t c : send) {
                     from.push_back(static_cast<const char*>(in.data_ptr()) + at * es);
                     at += c;
                   }
                   at = 0;
                   for (int64_t c : recv) {
                     to.push_back(static_cast<char*>(out.data_ptr()) + at * es);
                     at += c;
                   }
                   alltoall_buffers(g, from, send, to, recv, es);
                   unstage(target, out);
                 },
                 {target});
}

std::shared_ptr<Work> ProcessGroupShm::alltoall(std::vector<Tensor>& outputs,
                                                std::vector<Tensor>& inputs,
                                                const AllToAllOptions& opts) {
  std::vector<int64_t> send, recv;
  check_alltoall("alltoall", outputs, inputs, send, recv);
  std::vector<Tensor> sources = staged_all(inputs), targets = outputs, bufs = staged_all(outputs);
  shm_detail::Group* g = impl_->group.get();
  return enqueue(
      "alltoall", next(CollectiveKind::kAlltoall, inputs[0], -1), effective(opts.timeout),
      [g, sources, targets, bufs, send, recv] {
        std::vector<const char*> from;
        for (const auto& s : sources) from.push_back(static_cast<const char*>(s.data_ptr()));
        alltoall_buffers(g, from, send, pointers(bufs), recv, sources[0].element_size());
        unstage_all(targets, bufs);
      },
      targets);
}

std::shared_ptr<Work> ProcessGroupShm::barrier(const BarrierOptions& opts) {
  shm_detail::Group* g = impl_->group.get();
  return enqueue("barrier", next(CollectiveKind::kBarrier, Tensor(), 0), effective(opts.timeout),
                 [g] { g->run(shm_detail::RoundPlan()); }, {});
}

}  // namespace brasa::distributed
