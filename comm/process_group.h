#pragma once
// ProcessGroup: the collectives of a set of processes (c10d's ProcessGroup).
// Every operation returns a Work; tensors are passed as vectors as in c10d,
// one tensor per call on the CPU backends. Backends derive from it and share
// its argument checks, so every backend rejects bad input with the same words.

#include <brasa/comm/errors.h>
#include <brasa/comm/types.h>
#include <brasa/comm/work.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace brasa::distributed {

// What every rank says it is about to do; ranks compare these before a
// collective so that a mismatch is an error, not a hang or garbage.
enum class CollectiveKind : uint8_t {
  kBroadcast,
  kAllreduce,
  kAllreduceCoalesced,
  kReduce,
  kAllgather,
  kAllgatherIntoTensor,
  kGather,
  kScatter,
  kReduceScatter,
  kReduceScatterTensor,
  kAlltoall,
  kAlltoallBase,
  kBarrier,
};
const char* to_string(CollectiveKind kind);

struct Fingerprint {
  uint64_t sequence = 0;
  CollectiveKind kind = CollectiveKind::kBarrier;
  int8_t dtype = -1;  // ScalarType, -1 for none
  uint8_t reduce_op = 0;
  uint8_t unused = 0;
  int32_t root = -1;
  int64_t numel = 0;

  bool operator==(const Fingerprint& o) const {
    return sequence == o.sequence && kind == o.kind && dtype == o.dtype &&
           reduce_op == o.reduce_op && root == o.root && numel == o.numel;
  }
  // "allreduce(Float, 1024 elements, SUM) #12"
  std::string describe() const;
};

class ProcessGroup {
 public:
  using Work = distributed::Work;  // c10d::ProcessGroup::Work in older libtorch code
  static constexpr std::chrono::milliseconds kDefaultTimeout{30 * 60 * 1000};

  ProcessGroup(int rank, int size, std::chrono::milliseconds timeout);
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int getRank() const { return rank_; }
  int getSize() const { return size_; }
  virtual std::string backend_name() const = 0;
  std::string getBackendName() const { return backend_name(); }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Collectives issued by this rank so far.
  uint64_t sequence_number() const { return sequence_; }

  virtual std::shared_ptr<Work> broadcast(std::vector<Tensor>& tensors,
                                          const BroadcastOptions& opts = {}) = 0;
  virtual std::shared_ptr<Work> allreduce(std::vector<Tensor>& tensors,
                                          const AllreduceOptions& opts = {}) = 0;
  // Several tensors of one dtype reduced in one operation.
  virtual std::shared_ptr<Work> allreduce_coalesced(std::vector<Tensor>& tensors,
                                                    const AllreduceCoalescedOptions& opts = {}) = 0;
  virtual std::shared_ptr<Work> reduce(std::vector<Tensor>& tensors,
                                       const ReduceOptions& opts = {}) = 0;
  // outputs[0][r] receives rank r's inputs[0].
  virtual std::shared_ptr<Work> allgather(std::vector<std::vector<Tensor>>& outputs,
                                          std::vector<Tensor>& inputs,
                                          const AllgatherOptions& opts = {}) = 0;
  // output holds size() inputs one after the other (c10d's _allgather_base).
  virtual std::shared_ptr<Work> allgather_into_tensor(Tensor& output, Tensor& input,
                                                      const AllgatherOptions& opts = {}) = 0;
  // On the root, outputs[0][r] receives rank r's inputs[0]; elsewhere outputs is empty.
  virtual std::shared_ptr<Work> gather(std::vector<std::vector<Tensor>>& outputs,
                                       std::vector<Tensor>& inputs,
                                       const GatherOptions& opts = {}) = 0;
  // Rank r's outputs[0] receives the root's inputs[0][r].
  virtual std::shared_ptr<Work> scatter(std::vector<Tensor>& outputs,
                                        std::vector<std::vector<Tensor>>& inputs,
                                        const ScatterOptions& opts = {}) = 0;
  // Rank r's outputs[0] receives the reduction over ranks of inputs[0][r].
  virtual std::shared_ptr<Work> reduce_scatter(std::vector<Tensor>& outputs,
                                               std::vector<std::vector<Tensor>>& inputs,
                                               const ReduceScatterOptions& opts = {}) = 0;
  // input holds size() blocks; rank r's output receives the reduction of block r.
  virtual std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, Tensor& input,
                                                      const ReduceScatterOptions& opts = {}) = 0;
  // Splits along dim 0 (equal when the split sizes are empty): block r of the
  // input goes to rank r, block r of the output comes from rank r.
  virtual std::shared_ptr<Work> alltoall_base(Tensor& output, Tensor& input,
                                              std::vector<int64_t>& output_split_sizes,
                                              std::vector<int64_t>& input_split_sizes,
                                              const AllToAllOptions& opts = {}) = 0;
  virtual std::shared_ptr<Work> alltoall(std::vector<Tensor>& outputs, std::vector<Tensor>& inputs,
                                         const AllToAllOptions& opts = {}) = 0;
  virtual std::shared_ptr<Work> barrier(const BarrierOptions& opts = {}) = 0;
  virtual std::shared_ptr<Work> send(std::vector<Tensor>& tensors, int dst_rank, int tag) = 0;
  virtual std::shared_ptr<Work> recv(std::vector<Tensor>& tensors, int src_rank, int tag) = 0;
  virtual std::shared_ptr<Work> recv_anysource(std::vector<Tensor>& tensors, int tag) = 0;
  // Ends the group at once (MPI: the whole job, as c10d does).
  virtual void abort() = 0;

  // c10d spellings.
  std::shared_ptr<Work> allreduce_coalesced_(std::vector<Tensor>& t,
                                             const AllreduceCoalescedOptions& o = {}) {
    return allreduce_coalesced(t, o);
  }
  std::shared_ptr<Work> _allgather_base(Tensor& out, Tensor& in, const AllgatherOptions& o = {}) {
    return allgather_into_tensor(out, in, o);
  }
  std::shared_ptr<Work> _reduce_scatter_base(Tensor& out, Tensor& in,
                                             const ReduceScatterOptions& o = {}) {
    return reduce_scatter_tensor(out, in, o);
  }
  std::shared_ptr<Work> recvAnysource(std::vector<Tensor>& t, int tag) {
    return recv_anysource(t, tag);
  }

 protected:
  std::chrono::milliseconds effective(std::chrono::milliseconds t) const {
    return t.count() < 0 ? timeout_ : t;
  }
  // The single CPU tensor a call takes; `what` names it in errors.
  const Tensor& single(const char* op, const std::vector<Tensor>& tensors,
                       const char* what = "tensors") const;
  void check_rank(const char* op, const char* what, int64_t rank) const;
  void check_reduce_op(const char* op, ReduceOp reduce_op, ScalarType dtype) const;
  // Where this backend's tensors live: CPU, or CUDA for NCCL.
  virtual DeviceType tensor_device_type() const { return kCPU; }
  // On this backend's device, with the same dtype and number of elements.
  void check_like(const char* op, const Tensor& t, const Tensor& reference,
                  const std::string& what) const;
  void check_list(const char* op, const std::vector<Tensor>& list, const Tensor& reference,
                  const char* what) const;
  // The shared argument checks of the collectives:
  // allreduce_coalesced: at least one tensor, all of one dtype, op valid for it.
  void check_coalesced(const char* op, const std::vector<Tensor>& tensors,
                       ReduceOp reduce_op) const;
  // `whole` holds size() blocks like `part` (allgather_into_tensor's output,
  // reduce_scatter_tensor's input).
  void check_blocks(const char* op, const Tensor& whole, const Tensor& part,
                    const char* whole_name) const;
  // `lists` is one list of size() tensors like `like` (allgather's outputs,
  // reduce_scatter's inputs).
  void check_one_list(const char* op, const std::vector<std::vector<Tensor>>& lists,
                      const Tensor& like, const char* what) const;
  // gather's outputs / scatter's inputs: that list on the root, nothing
  // elsewhere. Returns whether this rank is the root.
  bool check_root_list(const char* op, const std::vector<std::vector<Tensor>>& lists,
                       const Tensor& like, int64_t root, const char* what) const;
  // alltoall: one input and one output per rank, defined CPU tensors of one
  // dtype; fills the element counts sent to and received from each rank.
  void check_alltoall(const char* op, const std::vector<Tensor>& outputs,
                      const std::vector<Tensor>& inputs, std::vector<int64_t>& send_counts,
                      std::vector<int64_t>& recv_counts) const;
  // alltoall_base: the input and output (CPU tensors of one dtype) and the
  // elements sent to and received from each rank.
  void check_alltoall_base(const Tensor& output, const Tensor& input,
                           const std::vector<int64_t>& output_split_sizes,
                           const std::vector<int64_t>& input_split_sizes,
                           std::vector<int64_t>& send_counts,
                           std::vector<int64_t>& recv_counts) const;
  // alltoall_base: elements per rank of `t` split along dim 0 by `splits`
  // (equal blocks when empty).
  std::vector<int64_t> split_elements(const char* op, const Tensor& t,
                                      const std::vector<int64_t>& splits, const char* what) const;
  // The next collective's fingerprint (counts it).
  Fingerprint next(CollectiveKind kind, const Tensor& t, int64_t numel,
                   ReduceOp reduce_op = ReduceOp::SUM, int64_t root = -1);
  std::string name(const char* op) const { return backend_name() + "." + op; }

 private:
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  uint64_t sequence_ = 0;
};

}  // namespace brasa::distributed
