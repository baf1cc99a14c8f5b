#pragma once
// ProcessGroupHierarchical: collectives of ranks spread over several hosts
// (backend names "shm+gloo" and "shm+mpi"). The ranks of each node form a
// ProcessGroupShm; the first rank of each node (its leader) joins a Gloo or
// MPI group of leaders. An allreduce reduces within each node through shared
// memory, allreduces among the leaders, then broadcasts within each node, so
// that only one rank per node talks over the network; broadcast, reduce and
// barrier go the same way. The other operations (gathers, scatters,
// alltoall, reduce_scatter, send/recv) go to a flat group of the network
// backend over all ranks.
//
// Nodes: ranks with the same node key share memory. The key is
// BRASA_NODE_ID when set, else the host name and the launcher's node index
// (GROUP_RANK, which brasarun sets), so brasarun's nodes on one host stay
// apart.

#include <brasa/comm/process_group.h>
#include <brasa/comm/store/store.h>

#include <memory>

namespace brasa::distributed {

class ProcessGroupHierarchical : public ProcessGroup {
 public:
  struct Options {
    std::chrono::milliseconds timeout = kDefaultTimeout;
    std::string inter_node = "gloo";  // "gloo" or "mpi"
    std::string node_id;              // this rank's node key; empty: see above
    std::string peer_host;            // gloo: the host the others reach rank 0 at
  };

  // Collective: every rank of the group calls it. With "mpi", group ranks are
  // MPI_COMM_WORLD's.
  ProcessGroupHierarchical(std::shared_ptr<Store> store, int rank, int size,
                           const Options& options);
  std::string backend_name() const override { return "shm+" + inter_node_; }

  int node_count() const { return nodes_; }
  int node_index() const { return node_; }
  // This rank within its node, and the node's ranks.
  int local_rank() const;
  int local_size() const;
  // The node key of this process (see above).
  static std::string default_node_id();

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
  void abort() override;

 private:
  // In place: reduce within the node, allreduce among leaders, broadcast
  // within the node.
  void allreduce_in_place(const Tensor& t, ReduceOp op, std::chrono::milliseconds timeout);

  std::string inter_node_;
  std::shared_ptr<ProcessGroup> local_;    // this node's ranks, through shared memory
  std::shared_ptr<ProcessGroup> leaders_;  // one rank per node (null on the others)
  std::shared_ptr<ProcessGroup> flat_;     // every rank, over the network backend
  int node_ = 0, nodes_ = 1;
  std::vector<int> node_of_;        // per group rank
  std::vector<int> local_rank_of_;  // per group rank
};

}  // namespace brasa::distributed
