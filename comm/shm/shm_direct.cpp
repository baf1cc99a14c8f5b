// The shm backend's direct collectives: instead of staging through the
// slots, each rank publishes where its tensor lives and the ranks copy and
// reduce straight between the tensors — through the mapping when a tensor is
// in shared memory, by cross-memory attach (process_vm_readv/writev) when it
// is private. Internal to brasa_comm.

#include "shm_direct.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "shm_reduce.h"

namespace brasa::distributed::shm_detail {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

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
// The piece when some peer's tensor is private: each piece costs a
// process_vm_readv and a process_vm_writev per peer, and their fixed cost
// (pinning the pages) dominated 128 KiB pieces, while pieces larger than L2
// leave the reduction to read what the kernel copied from L3. On 2 Zen 5
// cores, once the reduction was vectorized (SumArraysKernel), 512 KiB pieces
// took a private 16 MiB allreduce from 1.13 ms (2 MiB pieces) to 0.76 ms and
// 128 KiB ones 0.92 ms; 1 and 4 MiB did not move.
constexpr size_t kCrossMemoryPieceBytes = 512 << 10;

// Bytes [at, at + bytes) of the tensor peer p published this round: in
// place when it is mapped here, else read into `scratch`.
const char* peer_bytes(Group* g, int p, size_t at, char* scratch, size_t bytes) {
  const ExposedBuffer& e = g->header(p)->buffer;
  if (e.fd >= 0) return g->peer_buffer(p, e) + at;
  g->peer_read(p, e.address + at, scratch, bytes);
  return scratch;
}

// Copies between this rank and the tensor peer p published this round, at
// byte offset `at`: memcpy through the mapping when the tensor is in shared
// memory, process_vm_readv/writev otherwise.
void read_peer(Group* g, int p, size_t at, char* to, size_t bytes) {
  if (bytes == 0) return;
  const ExposedBuffer& e = g->header(p)->buffer;
  if (e.fd >= 0)
    std::memcpy(to, g->peer_buffer(p, e) + at, bytes);
  else
    g->peer_read(p, e.address + at, to, bytes);
}
void write_peer(Group* g, int p, size_t at, const char* from, size_t bytes) {
  if (bytes == 0) return;
  const ExposedBuffer& e = g->header(p)->buffer;
  if (e.fd >= 0)
    std::memcpy(g->peer_buffer(p, e) + at, from, bytes);
  else
    g->peer_write(p, e.address + at, from, bytes);
}

// What this rank publishes for a direct collective: its tensor's memfd when
// it has one, and its address.
ExposedBuffer publish(const Tensor& t) {
  ExposedBuffer e;
  Group::expose(t, e);
  e.address = reinterpret_cast<uintptr_t>(t.data_ptr());
  return e;
}

// Runs `copy` in a round that publishes `t`, then a closing round that keeps
// every published tensor untouched until no peer reads or writes it.
void run_direct(Group* g, const Tensor& t, const std::function<void()>& copy) {
  const ExposedBuffer mine = publish(t);
  RoundPlan plan;
  plan.rounds = 1;
  plan.buffer = &mine;
  plan.read = [&](uint64_t) { copy(); };
  g->run(plan);
  g->run(RoundPlan());
}

// Whether a collective of `bytes` per rank goes straight between the ranks'
// tensors (the same answer on every rank).
bool goes_direct(const Group* g, int64_t bytes) { return g->cma && bytes >= kCrossMemoryBytes; }

}  // namespace

// Allreduce straight between the ranks' tensors. Each rank publishes where
// its tensor lives: a memfd (DDP's buckets on this backend, tensors after
// share_memory_()) that peers map once and keep, or only its address. In the
// round that publishes them, each rank reduces its slice straight out of all
// tensors and writes the result into every one of them — memcpy for mapped
// tensors, process_vm_readv/writev for private ones. A last round keeps every
// tensor untouched until no peer reads or writes it any more. No staging
// copy, two synchronisations. Returns false (having changed nothing) when
// some rank's tensor can be reached neither way.
bool allreduce_direct(Group* g, const Tensor& buf, ReduceOp op) {
  const int P = g->size, me = g->rank;
  const size_t es = buf.element_size();
  const int64_t n = buf.numel();
  if (n * static_cast<int64_t>(es) < (g->cma ? kCrossMemoryBytes : kZeroCopyBytes)) return false;
  char* base = static_cast<char*>(buf.data_ptr());
  const ExposedBuffer mine = publish(buf);
  bool reachable = true, all_mapped = true;
  RoundPlan plan;
  plan.rounds = 1;
  plan.buffer = &mine;
  plan.read = [&](uint64_t) {
    for (int p = 0; p < P; ++p) all_mapped = all_mapped && g->header(p)->buffer.fd >= 0;
    reachable = all_mapped || g->cma;
    if (!reachable) return;
    // This rank's slice: no other rank reads or writes it in this round.
    const int64_t s = ceil_div(n, P);
    const int64_t first = std::min<int64_t>(me * s, n), len = std::min<int64_t>(s, n - first);
    const size_t piece_bytes = all_mapped ? kPieceBytes : kCrossMemoryPieceBytes;
    const int64_t piece = static_cast<int64_t>(piece_bytes / es);
    if (g->scratch.size() < piece_bytes * static_cast<size_t>(P))
      g->scratch.resize(piece_bytes * static_cast<size_t>(P));
    std::vector<const void*> in(static_cast<size_t>(P));
    for (int64_t c = first; c < first + len; c += piece) {
      const int64_t m = std::min(piece, first + len - c);
      const size_t bytes = static_cast<size_t>(m) * es, at = static_cast<size_t>(c) * es;
      for (int p = 0; p < P; ++p)
        in[static_cast<size_t>(p)] =
            p == me ? base + at : peer_bytes(g, p, at, g->scratch.data() + p * piece_bytes, bytes);
      reduce_into(base + at, in.data(), P, m, buf.scalar_type(), op);
      for (int p = 0; p < P; ++p)
        if (p != me) write_peer(g, p, at, base + at, bytes);
    }
  };
  g->run(plan);
  if (!reachable) return false;
  g->run(RoundPlan());
  ++(all_mapped ? g->zero_copy_allreduces : g->cross_memory_allreduces);
  return true;
}

// Broadcast straight between the ranks' tensors: each receiver copies the
// first (P-1)/P of the root's tensor while the root writes the last 1/P into
// every receiver's (so that the root's core works too). One copy instead of
// two through the slots.
bool broadcast_direct(Group* g, const Tensor& buf, int root) {
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

// Gather straight out of the ranks' inputs: each receiving rank copies every
// peer's input into its output (one copy instead of two through the slots).
bool gather_direct(Group* g, const Tensor& in, const std::vector<char*>& outs, int root) {
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

// reduce_scatter_tensor straight out of the ranks' inputs: each rank reduces
// its block of every peer's input, a piece at a time, into its output.
bool reduce_scatter_direct(Group* g, const Tensor& in, char* out, int64_t n, ScalarType dtype,
                           ReduceOp op) {
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
      reduce_into(out + c * static_cast<int64_t>(es), srcs.data(), P, std::min(piece, n - c), dtype,
                  op);
    }
  });
  return true;
}

}  // namespace brasa::distributed::shm_detail
