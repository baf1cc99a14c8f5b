#include "process_group_hierarchical.h"

#include <brasa/comm/gloo/process_group_gloo.h>
#include <brasa/comm/mpi/process_group_mpi.h>
#include <brasa/comm/shm/process_group_shm.h>
#include <brasa/comm/staging.h>
#include <brasa/comm/store/prefix_store.h>
#include <brasa/util/launch_env.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace brasa::distributed {

namespace {

// Runs `body` now; its error goes into the returned (completed) Work.
template <class F>
std::shared_ptr<Work> run_now(const char* op, std::vector<Tensor> outputs, F body) {
  auto work = std::make_shared<Work>(op);
  work->set_outputs(std::move(outputs));
  try {
    body();
    work->finish();
  } catch (...) {
    work->finish(std::current_exception());
  }
  return work;
}

std::shared_ptr<ProcessGroup> network_group(const std::string& backend,
                                            const std::shared_ptr<Store>& store,
                                            const std::vector<int>& ranks, int rank,
                                            const ProcessGroupHierarchical::Options& o) {
  if (backend == "mpi") {
    ProcessGroupMPI::Options mo;
    mo.timeout = o.timeout;
    return ProcessGroupMPI::create(ranks, mo);  // every process calls it
  }
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end()) return nullptr;
  ProcessGroupGloo::Options go;
  go.timeout = o.timeout;
  go.peer_host = o.peer_host;
  return std::make_shared<ProcessGroupGloo>(store, static_cast<int>(it - ranks.begin()),
                                            static_cast<int>(ranks.size()), go);
}

}  // namespace

std::string ProcessGroupHierarchical::default_node_id() {
  if (const char* id = std::getenv("BRASA_NODE_ID"); id && *id) return id;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string key = host;
  if (const char* node = std::getenv(launch::kGroupRank)) key.append("/").append(node);
  return key;
}

ProcessGroupHierarchical::ProcessGroupHierarchical(std::shared_ptr<Store> store, int rank, int size,
                                                   const Options& options)
    : ProcessGroup(rank, size, options.timeout), inter_node_(options.inter_node) {
  BRASA_CHECK(store != nullptr, "ProcessGroupHierarchical: the store is null");
  BRASA_CHECK(inter_node_ == "gloo" || inter_node_ == "mpi",
              "ProcessGroupHierarchical: the network backend must be gloo or mpi, got '",
              inter_node_, "'");
  // Which node each rank is on: nodes are numbered by their lowest rank.
  const std::string mine = options.node_id.empty() ? default_node_id() : options.node_id;
  store->set("node/" + std::to_string(rank), Bytes(mine.begin(), mine.end()));
  std::map<std::string, int> index;
  std::vector<std::vector<int>> members;
  for (int r = 0; r < size; ++r) {
    const std::string key = "node/" + std::to_string(r);
    store->wait({key}, options.timeout);
    const Bytes b = store->get(key);
    const std::string id(b.begin(), b.end());
    auto [it, added] = index.emplace(id, static_cast<int>(members.size()));
    if (added) members.emplace_back();
    members[static_cast<size_t>(it->second)].push_back(r);
    node_of_.push_back(it->second);
    local_rank_of_.push_back(static_cast<int>(members[static_cast<size_t>(it->second)].size()) - 1);
  }
  nodes_ = static_cast<int>(members.size());
  node_ = node_of_[static_cast<size_t>(rank)];
  ProcessGroupShm::Options so;
  so.timeout = options.timeout;
  local_ = std::make_shared<ProcessGroupShm>(
      std::make_shared<PrefixStore>("local/" + std::to_string(node_), store),
      local_rank_of_[static_cast<size_t>(rank)], static_cast<int>(members[node_].size()), so);
  std::vector<int> leaders, everyone;
  for (const auto& m : members) leaders.push_back(m.front());
  for (int r = 0; r < size; ++r) everyone.push_back(r);
  if (nodes_ > 1)
    leaders_ = network_group(inter_node_, std::make_shared<PrefixStore>("leaders", store), leaders,
                             rank, options);
  flat_ = network_group(inter_node_, std::make_shared<PrefixStore>("flat", store), everyone, rank,
                        options);
}

int ProcessGroupHierarchical::local_rank() const {
  return local_rank_of_[static_cast<size_t>(rank())];
}
int ProcessGroupHierarchical::local_size() const { return local_->size(); }

void ProcessGroupHierarchical::allreduce_in_place(const Tensor& t, ReduceOp op,
                                                  std::chrono::milliseconds timeout) {
  // AVG: sums all the way, one division at the end.
  const ReduceOp inner = op == ReduceOp::AVG ? ReduceOp::SUM : op;
  std::vector<Tensor> v{t};
  ReduceOptions ro;
  ro.reduceOp = inner;
  ro.rootRank = 0;
  ro.timeout = timeout;
  local_->reduce(v, ro)->wait();
  if (leaders_) {
    AllreduceOptions ao;
    ao.reduceOp = inner;
    ao.timeout = timeout;
    leaders_->allreduce(v, ao)->wait();
  }
  BroadcastOptions bo;
  bo.timeout = timeout;
  local_->broadcast(v, bo)->wait();
  if (op == ReduceOp::AVG) const_cast<Tensor&>(t).div_(size());
}

std::shared_ptr<Work> ProcessGroupHierarchical::allreduce(std::vector<Tensor>& tensors,
                                                          const AllreduceOptions& opts) {
  const Tensor t = single("allreduce", tensors);
  check_reduce_op("allreduce", opts.reduceOp, t.scalar_type());
  return run_now("allreduce", {t}, [&] {
    Tensor buf = detail::staged(t);
    allreduce_in_place(buf, opts.reduceOp, opts.timeout);
    detail::unstage(t, buf);
  });
}

std::shared_ptr<Work> ProcessGroupHierarchical::allreduce_coalesced(
    std::vector<Tensor>& tensors, const AllreduceCoalescedOptions& opts) {
  check_coalesced("allreduce_coalesced", tensors, opts.reduceOp);
  return run_now("allreduce_coalesced", tensors, [&] {
    Tensor flat = detail::flat_cat(tensors);
    allreduce_in_place(flat, opts.reduceOp, opts.timeout);
    detail::scatter_back(tensors, flat);
  });
}

std::shared_ptr<Work> ProcessGroupHierarchical::reduce(std::vector<Tensor>& tensors,
                                                       const ReduceOptions& opts) {
  const Tensor t = single("reduce", tensors);
  check_rank("reduce", "root", opts.rootRank);
  check_reduce_op("reduce", opts.reduceOp, t.scalar_type());
  // An allreduce of a copy: the root keeps it (only the leaders' step crosses
  // the network, as in a tree reduce).
  return run_now("reduce", {t}, [&] {
    Tensor copy = t.clone();
    allreduce_in_place(copy, opts.reduceOp, opts.timeout);
    if (rank() == opts.rootRank) const_cast<Tensor&>(t).copy_(copy);
  });
}

std::shared_ptr<Work> ProcessGroupHierarchical::broadcast(std::vector<Tensor>& tensors,
                                                          const BroadcastOptions& opts) {
  const Tensor t = single("broadcast", tensors);
  check_rank("broadcast", "root", opts.rootRank);
  return run_now("broadcast", {t}, [&] {
    const int root = static_cast<int>(opts.rootRank);
    const int root_node = node_of_[static_cast<size_t>(root)];
    std::vector<Tensor> v{t};
    BroadcastOptions b;
    b.timeout = opts.timeout;
    if (node_ == root_node) {  // the root's node first: its leader gets the data
      b.rootRank = local_rank_of_[static_cast<size_t>(root)];
      local_->broadcast(v, b)->wait();
    }
    if (leaders_) {
      b.rootRank = root_node;
      leaders_->broadcast(v, b)->wait();
    }
    if (node_ != root_node) {
      b.rootRank = 0;
      local_->broadcast(v, b)->wait();
    }
  });
}

std::shared_ptr<Work> ProcessGroupHierarchical::barrier(const BarrierOptions& opts) {
  return run_now("barrier", {}, [&] {
    local_->barrier(opts)->wait();
    if (leaders_) leaders_->barrier(opts)->wait();
    local_->barrier(opts)->wait();
  });
}

// ---- the rest, over the flat network group ----

std::shared_ptr<Work> ProcessGroupHierarchical::allgather(std::vector<std::vector<Tensor>>& outputs,
                                                          std::vector<Tensor>& inputs,
                                                          const AllgatherOptions& opts) {
  return flat_->allgather(outputs, inputs, opts);
}
std::shared_ptr<Work> ProcessGroupHierarchical::allgather_into_tensor(
    Tensor& output, Tensor& input, const AllgatherOptions& opts) {
  return flat_->allgather_into_tensor(output, input, opts);
}
std::shared_ptr<Work> ProcessGroupHierarchical::gather(std::vector<std::vector<Tensor>>& outputs,
                                                       std::vector<Tensor>& inputs,
                                                       const GatherOptions& opts) {
  return flat_->gather(outputs, inputs, opts);
}
std::shared_ptr<Work> ProcessGroupHierarchical::scatter(std::vector<Tensor>& outputs,
                                                        std::vector<std::vector<Tensor>>& inputs,
                                                        const ScatterOptions& opts) {
  return flat_->scatter(outputs, inputs, opts);
}
std::shared_ptr<Work> ProcessGroupHierarchical::reduce_scatter(
    std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs,
    const ReduceScatterOptions& opts) {
  return flat_->reduce_scatter(outputs, inputs, opts);
}
std::shared_ptr<Work> ProcessGroupHierarchical::reduce_scatter_tensor(
    Tensor& output, Tensor& input, const ReduceScatterOptions& opts) {
  return flat_->reduce_scatter_tensor(output, input, opts);
}
std::shared_ptr<Work> ProcessGroupHierarchical::alltoall_base(
    Tensor& output, Tensor& input, std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes, const AllToAllOptions& opts) {
  return flat_->alltoall_base(output, input, output_split_sizes, input_split_sizes, opts);
}
std::shared_ptr<Work> ProcessGroupHierarchical::alltoall(std::vector<Tensor>& outputs,
                                                         std::vector<Tensor>& inputs,
                                                         const AllToAllOptions& opts) {
  return flat_->alltoall(outputs, inputs, opts);
}
std::shared_ptr<Work> ProcessGroupHierarchical::send(std::vector<Tensor>& tensors, int dst_rank,
                                                     int tag) {
  return flat_->send(tensors, dst_rank, tag);
}
std::shared_ptr<Work> ProcessGroupHierarchical::recv(std::vector<Tensor>& tensors, int src_rank,
                                                     int tag) {
  return flat_->recv(tensors, src_rank, tag);
}
std::shared_ptr<Work> ProcessGroupHierarchical::recv_anysource(std::vector<Tensor>& tensors,
                                                               int tag) {
  return flat_->recv_anysource(tensors, tag);
}

void ProcessGroupHierarchical::abort() {
  local_->abort();
  if (leaders_) leaders_->abort();
  flat_->abort();
}

}  // namespace brasa::distributed
