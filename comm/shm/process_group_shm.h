#pragma once
// ProcessGroupShm: the collectives of ranks on one host through shared
// memory — no socket, no library in between (backend name "shm").
//
// Each rank owns one segment (a memfd: the kernel frees it with the last
// mapping, so a killed rank leaks nothing) that every peer maps through
// /proc/PID/fd. It holds a futex word counting this rank's progress, a
// failure flag with its reason, a few staging slots used by successive
// rounds in turn, and one point-to-point ring per peer.
//
// A collective runs in rounds of at most `chunk_bytes` per rank: every rank
// writes its part into its slot (with the collective's fingerprint), says
// so, then reads what it needs straight out of its peers' slots. An
// allreduce above 32 KiB adds a middle phase — a reduce-scatter: each rank
// reduces its slice from all slots in one pass — and then everyone copies
// the reduced slices; smaller ones let each rank reduce everything at once.
// Several slots let a rank fill round k+1 while peers still read round k;
// the chunks stay in the caches the ranks share.
//
// Allreduces and broadcasts of 64 KiB and more skip the slots when every
// rank can reach every peer's tensor: tensors in shared memory (DDP's
// buckets, share_memory_()) are mapped by the peers; private ones are read
// and written with process_vm_readv/writev (cross-memory attach, probed when
// the group is made). Each rank then reduces its slice straight out of all
// tensors and writes the result into all of them: no staging copy.
//
// Waiting spins briefly (not at all when ranks outnumber CPUs), then sleeps
// on the peer's futex word. While asleep it checks, every 50 ms, whether the
// peer's process is gone (pidfd) or gave up: a dead rank is named within a
// second, a slow one when the timeout passes. Ranks that called different
// collectives see each other's fingerprints in the first round and fail,
// naming both sides. A group that failed refuses further work.

#include <brasa/comm/process_group.h>
#include <brasa/comm/store/store.h>

#include <memory>

namespace brasa::distributed {

class ProcessGroupShm : public ProcessGroup {
 public:
  struct Options {
    std::chrono::milliseconds timeout = kDefaultTimeout;
    // Run collectives in order on the group's worker thread (overlapping with
    // the caller's work) instead of in the caller's thread.
    bool background_collectives = false;
    // Bytes each rank stages per round; 0 takes BRASA_SHM_CHUNK_BYTES or 2 MiB.
    size_t chunk_bytes = 0;
    // Let allreduces of private tensors go straight between the ranks'
    // memory (process_vm_readv/writev) where the system allows it on every
    // rank; false, or BRASA_SHM_CMA=0, always stages them through the slots.
    // Enabling it lets same-user processes attach to this one (Yama's
    // PR_SET_PTRACER), as Open MPI's single-copy transfers do.
    bool cross_memory_attach = true;
  };

  // Maps every other rank's segment, through `store` (collective: all ranks
  // call it). Every rank must run on this host.
  ProcessGroupShm(std::shared_ptr<Store> store, int rank, int size, const Options& options);
  ProcessGroupShm(std::shared_ptr<Store> store, int rank, int size);
  ~ProcessGroupShm() override;
  std::string backend_name() const override { return "shm"; }

  std::shared_ptr<Work> broadcast(std::vector<Tensor>& tensors,
                                  const BroadcastOptions& opts = {}) override;
  std::shared_ptr<Work> allreduce(std::vector<Tensor>& tensors,
                                  const AllreduceOptions& opts = {}) override;
  std::shared_ptr<Work> allreduce_coalesced(std::vector<Tensor>& tensors,
                                            const AllreduceCoalescedOptions& opts = {}) override;
  std::shared_ptr<Work> reduce(std::vector<Tensor>& tensors,
                               const ReduceOptions& opts = {}) override;
  std::shared_ptr<Work> allgather(std::vector<std::vector<Tensor>>& outputs,
                                  std::vector<Tensor>& inputs,
                                  const AllgatherOptions& opts = {}) override;
  std::shared_ptr<Work> allgather_into_tensor(Tensor& output, Tensor& input,
                                              const AllgatherOptions& opts = {}) override;
  std::shared_ptr<Work> gather(std::vector<std::vector<Tensor>>& outputs,
                               std::vector<Tensor>& inputs,
                               const GatherOptions& opts = {}) override;
  std::shared_ptr<Work> scatter(std::vector<Tensor>& outputs,
                                std::vector<std::vector<Tensor>>& inputs,
                                const ScatterOptions& opts = {}) override;
  std::shared_ptr<Work> reduce_scatter(std::vector<Tensor>& outputs,
                                       std::vector<std::vector<Tensor>>& inputs,
                                       const ReduceScatterOptions& opts = {}) override;
  std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, Tensor& input,
                                              const ReduceScatterOptions& opts = {}) override;
  std::shared_ptr<Work> alltoall_base(Tensor& output, Tensor& input,
                                      std::vector<int64_t>& output_split_sizes,
                                      std::vector<int64_t>& input_split_sizes,
                                      const AllToAllOptions& opts = {}) override;
  std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, std::vector<Tensor>& inputs,
                                 const AllToAllOptions& opts = {}) override;
  std::shared_ptr<Work> barrier(const BarrierOptions& opts = {}) override;
  std::shared_ptr<Work> send(std::vector<Tensor>& tensors, int dst_rank, int tag) override;
  std::shared_ptr<Work> recv(std::vector<Tensor>& tensors, int src_rank, int tag) override;
  std::shared_ptr<Work> recv_anysource(std::vector<Tensor>& tensors, int tag) override;
  // Fails the pending and future operations of this group, and tells the peers.
  void abort() override;

  // The process ids of the group's ranks, in rank order.
  std::vector<int> pids() const;
  // Allreduces that went straight between the ranks' tensors (every rank's
  // tensor in shared memory, 256 KiB or more) instead of through the slots.
  uint64_t zero_copy_allreduces() const;
  // Allreduces that reached some rank's private tensor by cross-memory
  // attach, and whether this group may (every rank could reach every peer).
  uint64_t cross_memory_allreduces() const;
  bool uses_cross_memory_attach() const;

  struct Impl;
  struct P2P;

 private:
  // Runs `body` as collective `f` (inline, or queued on the worker thread).
  std::shared_ptr<Work> enqueue(const char* op, const Fingerprint& f,
                                std::chrono::milliseconds timeout, std::function<void()> body,
                                std::vector<Tensor> outputs);
  std::shared_ptr<Work> post_p2p(const char* op, bool is_send, const Tensor& t, int peer, int tag);
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<P2P> p2p_;
};

}  // namespace brasa::distributed
