#pragma once
// The torch.distributed-style entry points: one default group per process,
// set up by init_process_group, and free functions that run collectives on
// it (or on a group from new_group).
//
//   brasa::distributed::init_process_group("mpi");            // under mpirun
//   brasa::distributed::init_process_group("gloo");           // under brasarun (env://)
//   brasa::distributed::all_reduce(grad);                     // SUM over the world
//
// init_method: "env://" (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, as
// brasarun sets them), "tcp://host:port" (with world_size and rank),
// "file:///path" (with world_size and rank). The mpi backend takes rank and
// size from MPI and needs none of them.

#include <brasa/comm/process_group.h>
#include <brasa/comm/store/store.h>

#include <memory>
#include <string>

namespace brasa::distributed {

using GroupPtr = std::shared_ptr<ProcessGroup>;

// Where init_process_group meets the other processes: a store every rank
// shares, this process's rank and the world size (torch.distributed's
// rendezvous). Under mpirun without MASTER_ADDR/MASTER_PORT, env:// needs no
// configuration: rank 0 starts a TCPStore on a free port and tells the others
// through MPI.
struct Rendezvous {
  std::shared_ptr<Store> store;
  int rank = 0;
  int world_size = 1;
  std::string master_addr;  // the host the others reach rank 0 at ("" if unknown)
};
Rendezvous rendezvous(const std::string& init_method, int world_size = -1, int rank = -1,
                      std::chrono::milliseconds timeout = ProcessGroup::kDefaultTimeout);

void init_process_group(const std::string& backend, const std::string& init_method = "env://",
                        int world_size = -1, int rank = -1,
                        std::chrono::milliseconds timeout = ProcessGroup::kDefaultTimeout);
// With a store the caller made (rank and world_size required).
void init_process_group(const std::string& backend, std::shared_ptr<Store> store, int world_size,
                        int rank,
                        std::chrono::milliseconds timeout = ProcessGroup::kDefaultTimeout);
bool is_initialized();
// Drops the default group and every group from new_group.
void destroy_process_group();

GroupPtr default_group();  // the world; error before init_process_group
// The store of the default group (null for the mpi backend).
std::shared_ptr<Store> default_store();
std::string get_backend(const GroupPtr& group = nullptr);
int get_rank(const GroupPtr& group = nullptr);
int get_world_size(const GroupPtr& group = nullptr);

// A group of some world ranks. Every process must call it, members or not
// (as in torch.distributed); non-members get null.
GroupPtr new_group(std::vector<int> ranks = {}, std::chrono::milliseconds timeout = kUnsetTimeout);

// ---- collectives on a group (default: the world). Each returns its Work;
// unless async_op, it has already been waited for.
std::shared_ptr<Work> broadcast(Tensor& tensor, int src, const GroupPtr& group = nullptr,
                                bool async_op = false);
std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM,
                                 const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_reduce_coalesced(std::vector<Tensor>& tensors,
                                           ReduceOp op = ReduceOp::SUM,
                                           const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM,
                             const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, Tensor& tensor,
                                 const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, Tensor& input,
                                             const GroupPtr& group = nullptr,
                                             bool async_op = false);
// gather_list: filled on dst only (pass an empty list elsewhere).
std::shared_ptr<Work> gather(Tensor& tensor, std::vector<Tensor>& gather_list, int dst,
                             const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> scatter(Tensor& tensor, std::vector<Tensor>& scatter_list, int src,
                              const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> reduce_scatter(Tensor& output, std::vector<Tensor>& input_list,
                                     ReduceOp op = ReduceOp::SUM, const GroupPtr& group = nullptr,
                                     bool async_op = false);
std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, Tensor& input,
                                            ReduceOp op = ReduceOp::SUM,
                                            const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_to_all_single(Tensor& output, Tensor& input,
                                        std::vector<int64_t> output_split_sizes = {},
                                        std::vector<int64_t> input_split_sizes = {},
                                        const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> all_to_all(std::vector<Tensor>& output_list, std::vector<Tensor>& input_list,
                                 const GroupPtr& group = nullptr, bool async_op = false);
std::shared_ptr<Work> barrier(const GroupPtr& group = nullptr, bool async_op = false);
// Like barrier, but rank 0 names the ranks that did not arrive within the
// timeout (all of them with wait_all_ranks, else the first).
void monitored_barrier(const GroupPtr& group = nullptr,
                       std::chrono::milliseconds timeout = kUnsetTimeout,
                       bool wait_all_ranks = false);

void send(Tensor& tensor, int dst, const GroupPtr& group = nullptr, int tag = 0);
// Returns the sender's rank (src -1: any).
int recv(Tensor& tensor, int src = -1, const GroupPtr& group = nullptr, int tag = 0);
std::shared_ptr<Work> isend(Tensor& tensor, int dst, const GroupPtr& group = nullptr, int tag = 0);
std::shared_ptr<Work> irecv(Tensor& tensor, int src = -1, const GroupPtr& group = nullptr,
                            int tag = 0);

}  // namespace brasa::distributed
