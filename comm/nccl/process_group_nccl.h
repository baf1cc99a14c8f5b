#pragma once
// ProcessGroupNCCL: collectives on CUDA tensors through NCCL (CUDA builds).
//
// - One communicator per device, created at the first collective on it; its
//   unique id travels through the Store from rank 0.
// - Each device's collectives run on a dedicated stream from the pool. The
//   stream first waits (by an event) for the work queued so far on the
//   caller's current stream, and the tensors are recorded on it with the
//   caching allocator, so they are not reused before NCCL is done with them.
// - Work::wait() makes the caller's current stream wait for the collective
//   (the host does not block, as in PyTorch); with
//   Options::blocking_wait (BRASA_NCCL_BLOCKING_WAIT=1) it blocks the host
//   until the collective is done or its timeout passed.
// - A watchdog thread (watchdog.h) completes Works as the device finishes
//   them, and turns a collective that ran past its timeout, or a
//   communicator error, into an error naming the operation and its sequence
//   number: it aborts the communicators, so no kernel of the group is left
//   waiting for a dead peer, and the group refuses further work.
//
// NCCL has no recv from any source and no bitwise reductions: those are
// errors. bool tensors reduce as uint8 (SUM as MAX, PRODUCT as MIN).
#include <brasa/comm/process_group.h>
#include <brasa/comm/store/store.h>

#include <memory>

namespace brasa::distributed {

class ProcessGroupNCCL : public ProcessGroup {
 public:
  struct Options {
    std::chrono::milliseconds timeout = kDefaultTimeout;
    // NCCL's streams from the high-priority pool.
    bool is_high_priority_stream = false;
    // wait() blocks the host (BRASA_NCCL_BLOCKING_WAIT=1 sets it).
    bool blocking_wait = false;
    std::chrono::milliseconds watchdog_interval{100};
  };

  // Needs a CUDA device; communicators are made lazily (collective over the ranks).
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, const Options& options);
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size);
  ~ProcessGroupNCCL() override;
  std::string backend_name() const override { return "nccl"; }
  DeviceType tensor_device_type() const override { return kCUDA; }

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
  // Aborts the communicators: collectives in flight return, later ones fail.
  void abort() override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace brasa::distributed
