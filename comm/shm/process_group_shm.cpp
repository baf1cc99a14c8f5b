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
#include "shm_direct.h"
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
                   if (shm_detail::broadcast_direct(g, buf, root)) return unstage(t, buf);
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

// In-place allreduce (or reduce to `root` when root >= 0) of a contiguous buffer.
void allreduce_buffer(shm_detail::Group* g, const Tensor& buf, ReduceOp op, int root) {
  const ScalarType dtype = buf.scalar_type();
  const size_t es = buf.element_size();
  const int P = g->size, me = g->rank;
  const int64_t n = buf.numel(), chunk = static_cast<int64_t>(g->layout.chunk_bytes / es);
  char* base = static_cast<char*>(buf.data_ptr());
  const bool gets_result = root < 0 || root == me;
  if (root < 0 && shm_detail::allreduce_direct(g, buf, op)) return;
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

// Rank p's n elements at `in` land at outs[p] on every rank (or on the root
// only when root >= 0).
void gather_buffers(shm_detail::Group* g, const Tensor& input, const std::vector<char*>& outs,
                    int root) {
  if (shm_detail::gather_direct(g, input, outs, root)) return;
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
                   if (shm_detail::reduce_scatter_direct(g, in, static_cast<char*>(out.data_ptr()),
                                                         n, out.scalar_type(), op))
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
