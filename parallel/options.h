#pragma once
// The options of DistributedDataParallel, with the names and defaults of
// PyTorch's torch.nn.parallel.DistributedDataParallel constructor arguments.

#include <brasa/comm/distributed.h>

namespace brasa::nn::parallel {

struct DistributedDataParallelOptions {
  // The group gradients are reduced over (null: the default group).
  DistributedDataParallelOptions& process_group(distributed::GroupPtr g) {
    process_group_ = std::move(g);
    return *this;
  }
  const distributed::GroupPtr& process_group() const { return process_group_; }
  // Size of a gradient bucket, and of the first (smaller, so that the first
  // allreduce starts early in backward).
  DistributedDataParallelOptions& bucket_cap_mb(double v) {
    bucket_cap_mb_ = v;
    return *this;
  }
  double bucket_cap_mb() const { return bucket_cap_mb_; }
  DistributedDataParallelOptions& first_bucket_mb(double v) {
    first_bucket_mb_ = v;
    return *this;
  }
  double first_bucket_mb() const { return first_bucket_mb_; }
  // Buffers (BatchNorm running statistics) are sent from rank 0 before each forward.
  DistributedDataParallelOptions& broadcast_buffers(bool v) {
    broadcast_buffers_ = v;
    return *this;
  }
  bool broadcast_buffers() const { return broadcast_buffers_; }
  // After each forward, parameters the output does not depend on are found
  // by walking the autograd graph and count as reduced (with zero gradient).
  DistributedDataParallelOptions& find_unused_parameters(bool v) {
    find_unused_parameters_ = v;
    return *this;
  }
  bool find_unused_parameters() const { return find_unused_parameters_; }
  // Parameters' .grad are views into the flat bucket buffers: no copy in or
  // out, and the averaged gradient is left in place.
  DistributedDataParallelOptions& gradient_as_bucket_view(bool v) {
    gradient_as_bucket_view_ = v;
    return *this;
  }
  bool gradient_as_bucket_view() const { return gradient_as_bucket_view_; }
  // The set of parameters used, and how often, is the same every iteration:
  // recorded in the first iteration, then no graph walks.
  DistributedDataParallelOptions& static_graph(bool v) {
    static_graph_ = v;
    return *this;
  }
  bool static_graph() const { return static_graph_; }

 private:
  distributed::GroupPtr process_group_;
  double bucket_cap_mb_ = 25;
  double first_bucket_mb_ = 1;
  bool broadcast_buffers_ = true;
  bool find_unused_parameters_ = false;
  bool gradient_as_bucket_view_ = false;
  bool static_graph_ = false;
};

}  // namespace brasa::nn::parallel
