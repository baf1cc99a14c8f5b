#pragma once
// Join: training with uneven inputs (PyTorch's torch.distributed.algorithms
// .join.Join with a DistributedDataParallel). A rank that runs out of
// batches calls finish() (or leaves the Join's scope) and then runs the
// collectives the other ranks' iterations need — zero gradients into each
// bucket allreduce, the bucket rebuild — until every rank has finished, so
// nobody hangs. At each forward the ranks that still train count themselves
// (one small allreduce); gradients are divided by the initial world size
// (divide_by_initial_world_size, the default) or by the ranks still
// training. At the end every rank takes the model of the rank that trained
// longest. With throw_on_early_termination, every rank throws as soon as
// one runs out instead.
//
//   {
//     nn::parallel::Join join({ddp.get()});
//     for (auto& batch : my_uneven_share) { ...forward, backward, step... }
//   }  // finishes here
//
// Every iteration inside the Join must run one synchronized forward and
// backward (no no_sync(), no forward without backward).

#include <brasa/parallel/distributed_data_parallel.h>

#include <vector>

namespace brasa::nn::parallel {

struct JoinOptions {
  JoinOptions& enable(bool v) {
    enable_ = v;
    return *this;
  }
  bool enable() const { return enable_; }
  JoinOptions& throw_on_early_termination(bool v) {
    throw_on_early_termination_ = v;
    return *this;
  }
  bool throw_on_early_termination() const { return throw_on_early_termination_; }
  JoinOptions& divide_by_initial_world_size(bool v) {
    divide_by_initial_world_size_ = v;
    return *this;
  }
  bool divide_by_initial_world_size() const { return divide_by_initial_world_size_; }

 private:
  bool enable_ = true;
  bool throw_on_early_termination_ = false;
  bool divide_by_initial_world_size_ = true;
};

class Join {
 public:
  static constexpr const char* kEarlyTermination =
      "Detected at least one rank that exhausted inputs. Throwing across all ranks.";

  explicit Join(std::vector<DistributedDataParallelBase*> joinables, JoinOptions options = {});
  // Finishes unless an exception is on its way out.
  ~Join() noexcept(false);
  Join(const Join&) = delete;
  Join& operator=(const Join&) = delete;

  // This rank has no more inputs: shadow the others until all are done.
  void finish();
  const JoinOptions& options() const { return options_; }

 private:
  DistributedDataParallelBase* ddp_;
  JoinOptions options_;
  bool finished_ = false;
  int uncaught_;
};

}  // namespace brasa::nn::parallel
