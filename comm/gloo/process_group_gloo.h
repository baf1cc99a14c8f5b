#pragma once
// ProcessGroupGloo: the collectives over Gloo's TCP transport, connected
// through one of our Stores. Collectives run in the caller's thread, one at a
// time per group, and return completed Works (a hand-off to another thread
// costs a scheduler wake-up per call, which on a busy machine is more than a
// small allreduce). With Options::background_collectives they run in order
// on the group's worker thread instead, overlapping with the caller's work.
// send/recv are posted at once and completed by the group's p2p thread.
//
// Each collective's Gloo tag is derived from its fingerprint (sequence
// number, op, dtype, size, root), so ranks that call different collectives
// never exchange data: they time out, then publish their fingerprints in the
// store, and the error names both sides, or the ranks that never arrived.
// A group that failed this way refuses further work.
//
// Creating a group ignores SIGPIPE (when it has its default action): Gloo
// writes to sockets without MSG_NOSIGNAL, and a dead peer must fail the
// operation, not kill the process.
//
// reduce_scatter runs as an allreduce of the whole input (Gloo has no
// reduce-scatter with the new-style options); its results are exact.

#include <brasa/comm/process_group.h>
#include <brasa/comm/store/store.h>

#include <memory>

namespace brasa::distributed {

class ProcessGroupGloo : public ProcessGroup {
 public:
  struct Options {
    std::chrono::milliseconds timeout = kDefaultTimeout;
    // Address of this host for the other ranks: empty means the local address
    // on the route to `peer_host` (or loopback when that is empty too).
    std::string hostname;
    std::string peer_host;  // usually MASTER_ADDR
    // Run collectives on the group's worker thread (see above).
    bool background_collectives = false;
  };

  // Connects to every other rank through `store` (collective: all ranks call it).
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, const Options& options);
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size);
  ~ProcessGroupGloo() override;
  std::string backend_name() const override { return "gloo"; }

  // The local address on the route to `host` ("127.0.0.1" for loopback).
  static std::string local_address_toward(const std::string& host);

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
  // Fails the pending and future operations of this group.
  void abort() override;

  struct Impl;
  struct P2P;

 private:
  std::shared_ptr<Work> post(const char* op, bool is_send, const Tensor& target, int peer, int tag);
  std::shared_ptr<Work> enqueue(
      const char* op, const Fingerprint& f, std::chrono::milliseconds timeout,
      std::function<void(uint32_t tag, std::chrono::milliseconds timeout)> run,
      std::vector<Tensor> outputs);
  std::unique_ptr<Impl> impl_;
};

}  // namespace brasa::distributed
