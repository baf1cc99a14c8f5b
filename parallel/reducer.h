#pragma once
// Reducer: the gradient synchronization of DistributedDataParallel, after
// the PyTorch DDP paper (Li et al., VLDB 2020).
//
// Gradients are grouped into buckets: flat buffers of one dtype and device,
// filled in reverse registration order (the order backward usually produces
// them), the first one small (first_bucket_mb) so communication starts
// early. A post-accumulate-grad hook on each parameter copies its gradient
// into its bucket (or finds it already there, with gradient_as_bucket_view)
// and marks it ready; a bucket whose gradients are all ready is handed to
// the communication thread, strictly in bucket order on every rank, which
// runs the communication hook (default: divide by the world size and
// allreduce) while backward goes on. A callback at the end of backward waits
// for the buckets and writes the averaged gradients back to .grad.
//
// After the first synchronized iteration the buckets are rebuilt once in the
// order gradients actually arrived on rank 0 (broadcast, so every rank uses
// the same), as PyTorch does.

#include <brasa/parallel/grad_bucket.h>
#include <brasa/parallel/options.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace brasa::autograd {
class Node;
}

namespace brasa::nn::parallel {

// Timings of the synchronized iterations so far, like PyTorch's DDP logging
// data. Times are averages over those iterations, in milliseconds.
struct DistributedDataParallelStats {
  int64_t iterations = 0;  // synchronized backward passes measured
  double avg_forward_compute_time_ms = 0;
  // From the end of forward to the end of backward (loss included).
  double avg_backward_compute_time_ms = 0;
  // Time the communication thread spent reducing buckets.
  double avg_backward_comm_time_ms = 0;
  // Time the end of backward waited for communication: what overlap did not hide.
  double avg_exposed_comm_time_ms = 0;
  std::vector<int64_t> bucket_sizes;        // bytes per bucket, in reduction order
  std::vector<int64_t> bucket_param_count;  // parameters per bucket
  // Time each bucket's reduction took (communication hook or allreduce,
  // launch to completion), averaged over its reductions; in bucket order.
  std::vector<double> avg_bucket_comm_time_ms;
  bool buckets_rebuilt = false;
  int world_size = 1;
  std::string backend;
  bool comm_hook = false;
};

class Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  // params: the parameters that require grad, in registration order, with names.
  static std::shared_ptr<Reducer> create(std::vector<Tensor> params, std::vector<std::string> names,
                                         distributed::GroupPtr group,
                                         const DistributedDataParallelOptions& options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Start of forward: fails if the previous iteration's reduction did not
  // finish (a parameter got no gradient), rebuilds the buckets once.
  void prepare_for_forward();
  // End of forward with grad enabled: expect the hooks of this backward
  // (sync) or let gradients accumulate locally (!sync). With
  // find_unused_parameters, walks the graph from `outputs`.
  void prepare_for_backward(const std::vector<Tensor>& outputs, bool sync);

  void register_comm_hook(CommHook hook);
  DistributedDataParallelStats stats() const;
  void record_forward_time(double ms);

  // Whether the next prepare_for_forward rebuilds the buckets, and the
  // rebuild itself (a collective).
  bool will_rebuild() const;
  void shadow_rebuild();
  // Join: the collectives of one synchronized backward, with zero
  // gradients, for a rank that has no more inputs.
  void shadow_backward();
  // Gradients are divided by this instead of the group size (0: the group size).
  void set_divisor(int64_t d) { divisor_ = d; }

 private:
  struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;
    Tensor buffer;
    size_t pending = 0;
    // Guarded by mu_:
    bool launched = false, done = false;
    std::exception_ptr error;
    double comm_ms_sum = 0;  // reductions of this bucket so far, and their time
    int64_t reductions = 0;
  };

  Reducer(std::vector<Tensor> params, std::vector<std::string> names, distributed::GroupPtr group,
          const DistributedDataParallelOptions& options);
  void install_hooks();
  // Buckets over `order` (parameter indices), by dtype and device.
  void build_buckets(const std::vector<size_t>& order);
  Tensor bucket_view(size_t param) const;
  void mark_ready(size_t param, bool from_hook);
  void copy_grad_in(size_t param);
  void launch_ready_buckets();
  void finalize();
  void wait_for_launched();
  void write_back(const std::vector<bool>& globally_used);
  bool reduces_used_bitmap() const;
  void reset_iteration();
  void comm_loop();
  void run_queued(std::unique_lock<std::mutex>& lock);
  void reduce_bucket(size_t b);
  std::string unready_names() const;
  std::string where() const;

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::vector<std::shared_ptr<autograd::Node>> accumulators_;  // keep the hook targets alive
  distributed::GroupPtr group_;
  DistributedDataParallelOptions options_;
  CommHook hook_;
  bool has_hook_ = false;

  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;        // param -> bucket
  std::vector<size_t> index_in_bucket_;  // param -> position in its bucket

  // The current iteration (engine thread).
  bool expect_hooks_ = false;  // a synchronized backward is expected
  bool started_ = false;       // some gradient arrived in it
  bool finalized_ = true;
  std::vector<bool> ready_;
  std::vector<bool> locally_used_;
  std::vector<int> hook_count_;      // hooks seen this iteration
  std::vector<int> expected_hooks_;  // static_graph: hooks per parameter, from iteration 0
  std::vector<bool> static_globally_used_;
  size_t next_to_launch_ = 0;
  int64_t sync_iterations_ = 0;
  int64_t divisor_ = 0;  // 0: the group size

  // Bucket rebuild in arrival order.
  std::vector<size_t> arrival_;
  bool rebuilt_ = false;

  // Communication thread.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> queue_;
  bool stop_ = false;
  bool busy_ = false;  // a bucket is being reduced
  std::thread comm_thread_;

  // Statistics.
  std::chrono::steady_clock::time_point forward_end_;
  double comm_ms_this_iteration_ = 0;  // guarded by mu_
  double sum_forward_ms_ = 0, sum_backward_ms_ = 0, sum_comm_ms_ = 0, sum_exposed_ms_ = 0;
  int64_t forward_count_ = 0;
};

}  // namespace brasa::nn::parallel
