#pragma once
// The layout of a rank's segment in the shared-memory backend, shared by its
// collectives and its point-to-point rings. Internal to brasa_comm.

#include <brasa/comm/process_group.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace brasa::distributed::shm_detail {

// A futex word and the number of processes asleep on it, alone on a cache line.
struct alignas(64) FutexWord {
  std::atomic<uint32_t> value{0};
  std::atomic<uint32_t> sleepers{0};
};

// The start of every segment.
struct SegmentHead {
  FutexWord progress;  // collectives: 3 * round + phase
  FutexWord bell;      // point-to-point: rung when a ring this rank reads or writes moved
  alignas(64) std::atomic<uint32_t> failed{0};
  int32_t pid = 0;
  char reason[496] = {};  // why this rank gave up on the group (when failed)
};

// A tensor's memory this rank lets its peers map (zero-copy collectives): a
// memfd the process holds open as `fd` (-1: none), the data at `offset`.
struct ExposedBuffer {
  int64_t fd = -1;
  uint64_t inode = 0;  // tells a reused descriptor number apart
  uint64_t bytes = 0;  // of the whole memfd
  uint64_t offset = 0;
  // Where the data starts in the owner's address space: peers reach private
  // memory there with process_vm_readv/writev (cross-memory attach).
  uint64_t address = 0;
};

// The start of each staging slot: what the rank is doing this round.
struct RoundHeader {
  Fingerprint fingerprint;
  ExposedBuffer buffer;
  uint64_t rounds = 0;  // how many rounds this rank needs for the collective
  // followed by int64_t counts[size] (alltoall: elements for each rank)
};

// One direction of a point-to-point channel: the writer advances `head`, the
// reader `tail`; both count bytes since the start.
struct RingHead {
  alignas(64) std::atomic<uint64_t> head{0};
  alignas(64) std::atomic<uint64_t> tail{0};
};

constexpr size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Staging slots per rank, used by successive rounds in turn: a rank writes a
// slot again only after every peer finished the round that last used it.
// Two let a rank fill round k+1 while its peers read round k; four measured
// slower on 2 Zen 4 cores (twice the memory the caches must hold).
constexpr int kSlots = 2;

struct Layout {
  size_t chunk_bytes = 0;   // data bytes of a slot
  size_t header_bytes = 0;  // RoundHeader and counts, rounded up
  size_t slot_bytes = 0;
  size_t slots_at = 0;
  size_t ring_bytes = 0;  // data bytes of a ring
  size_t rings_at = 0;
  size_t ring_stride = 0;
  size_t total = 0;

  Layout(int size, size_t chunk, size_t ring) : chunk_bytes(chunk), ring_bytes(ring) {
    header_bytes = align_up(sizeof(RoundHeader) + sizeof(int64_t) * size, 64);
    slot_bytes = align_up(header_bytes + chunk_bytes, 4096);
    slots_at = align_up(sizeof(SegmentHead), 4096);
    rings_at = slots_at + kSlots * slot_bytes;
    ring_stride = align_up(sizeof(RingHead) + ring_bytes, 4096);
    total = rings_at + ring_stride * static_cast<size_t>(size);
  }
};

}  // namespace brasa::distributed::shm_detail
