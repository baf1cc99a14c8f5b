#pragma once
// Work: the handle of a collective or point-to-point operation in flight.
// wait() blocks until it completes (and throws the error it failed with);
// a timeout passed to wait() bounds the wait.

#include <brasa/tensor/tensor.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace brasa::distributed {

class Work {
 public:
  // What the operation is, for messages: "allreduce", "send".
  explicit Work(std::string op, int source_rank = -1)
      : op_(std::move(op)), source_rank_(source_rank) {}
  virtual ~Work() = default;

  // Whether it finished (successfully or not). Backends may make progress here.
  virtual bool is_completed();
  bool is_success();
  // The error it failed with, or null.
  std::exception_ptr exception();
  // recv_anysource: the rank the data came from (-1 until known).
  int source_rank() const { return source_rank_; }
  // Blocks until done; kUnsetTimeout (the default) waits as long as the
  // operation's own timeout allows. Throws the operation's error, or
  // DistTimeoutError. Returns true.
  virtual bool wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1));
  // The output tensors of the operation.
  const std::vector<Tensor>& result() const { return outputs_; }
  const std::string& op() const { return op_; }

  // c10d spellings.
  bool isCompleted() { return is_completed(); }
  bool isSuccess() { return is_success(); }
  int sourceRank() const { return source_rank_; }

  // For backends: records the end, wakes waiters.
  void finish(std::exception_ptr error = nullptr);
  void set_outputs(std::vector<Tensor> outputs) { outputs_ = std::move(outputs); }
  void set_source_rank(int rank) { source_rank_ = rank; }

 protected:
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool completed_ = false;
  std::exception_ptr error_;

 private:
  std::string op_;
  int source_rank_;
  std::vector<Tensor> outputs_;
};

// A Work that is already complete (for operations done inline).
std::shared_ptr<Work> completed_work(std::string op, std::vector<Tensor> outputs = {});

}  // namespace brasa::distributed
