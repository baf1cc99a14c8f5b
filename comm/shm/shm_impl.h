#pragma once
// The insides of ProcessGroupShm shared by its collectives and its
// point-to-point channels: the mapped segments of all ranks and the round
// engine. Internal to brasa_comm.

#include <brasa/comm/shm/process_group_shm.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shm_layout.h"
#include "shm_memory.h"

namespace brasa::distributed::shm_detail {

// What one collective does in each of its rounds (round index i from 0):
// write fills this rank's slot, middle (optional) runs between two
// synchronisations, read takes what this rank needs from the peers' halves.
struct RoundPlan {
  uint64_t rounds = 0;              // this rank's rounds; the group runs the most any rank asks
  const int64_t* counts = nullptr;  // size() numbers published in the header (alltoall)
  const ExposedBuffer* buffer = nullptr;  // published in the header (zero-copy)
  std::function<void(uint64_t)> write, middle, read;
};

// A positive byte count from environment variable `name`, or `fallback`.
size_t env_bytes(const char* name, size_t fallback);

struct Peer {
  Storage segment;
  SegmentHead* head = nullptr;
  char* slots[kSlots] = {};
  char* rings = nullptr;
  PeerProcess process;         // not watched for this rank itself
  uintptr_t head_address = 0;  // where the segment is mapped in the peer's process
};

struct Group {
  Group(const std::shared_ptr<Store>& store, int rank, int size, size_t chunk_bytes,
        std::chrono::milliseconds timeout, bool cross_memory_attach);

  const int rank, size;
  const Layout layout;
  Storage own;
  std::vector<Peer> peers;
  std::chrono::microseconds spin{0};
  // Allreduces up to this size reduce everything on every rank (one step).
  int64_t direct_bytes = 32 << 10;

  // The collective being run (set before each).
  struct Current {
    const char* name = "";
    Fingerprint fingerprint;
    std::chrono::milliseconds timeout{0};
    std::chrono::steady_clock::time_point deadline;
  } op;
  uint64_t round = 0;  // rounds run so far
  int slot = 0;        // the slot of the current round

  std::atomic<bool> broken{false};
  std::mutex mu;
  std::string broken_reason;  // under mu

  static uint32_t state(uint64_t round, int phase) {
    return static_cast<uint32_t>(3 * round + static_cast<uint64_t>(phase));
  }
  RoundHeader* header(int p) const {
    return reinterpret_cast<RoundHeader*>(peers[static_cast<size_t>(p)].slots[slot]);
  }
  const int64_t* counts(int p) const { return reinterpret_cast<const int64_t*>(header(p) + 1); }
  char* data(int p) const {
    return peers[static_cast<size_t>(p)].slots[slot] + layout.header_bytes;
  }
  // Elements of one rank's piece when a slot is split into size() pieces.
  int64_t piece_elements(size_t element_size) const {
    return static_cast<int64_t>(layout.chunk_bytes / static_cast<size_t>(size) / element_size);
  }

  void run(const RoundPlan& plan);

  // Zero-copy: whether `buf` (contiguous) lives in a memfd the peers can map,
  // described in `e`; and where peer p's exposed buffer `e` is mapped here
  // (mapped once, kept for the next calls).
  static bool expose(const Tensor& buf, ExposedBuffer& e);
  char* peer_buffer(int p, const ExposedBuffer& e);
  struct Mapped {
    int64_t fd;
    uint64_t inode;
    Storage storage;
  };
  std::vector<std::vector<Mapped>> mapped;  // per peer, the most recent last
  std::atomic<uint64_t> zero_copy_allreduces{0};

  // Cross-memory attach: every rank can read and write every peer's private
  // memory (process_vm_readv/writev; probed when the group is made, agreed by
  // all ranks). Collectives then move private tensors without staging them.
  bool cma = false;
  std::atomic<uint64_t> cross_memory_allreduces{0};
  // Copies between this process and peer p's memory at `address`; a failure
  // (the peer died) fails the group, naming the peer.
  void peer_read(int p, uint64_t address, void* to, size_t bytes);
  void peer_write(int p, uint64_t address, const void* from, size_t bytes);
  [[noreturn]] void cross_memory_failed(int p, const char* verb, int err);
  std::vector<char> scratch;  // peers' chunks read for a reduction
  static void publish(FutexWord& word, uint32_t value);
  void wait_peer(int p, uint32_t target);
  void wait_all(uint32_t target);
  void check_fingerprints();
  // Why peer p cannot take part any more ("" while it can).
  std::string peer_failure(int p) const;
  // Marks this rank failed (for the peers) and the group broken (here).
  void fail(const std::string& reason);
  std::string reason();
  [[noreturn]] void throw_failure(const std::string& what, int p);
  [[noreturn]] void throw_timeout(uint32_t target);
};

}  // namespace brasa::distributed::shm_detail
