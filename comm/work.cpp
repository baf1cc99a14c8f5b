#include "work.h"

#include <brasa/comm/errors.h>
#include <brasa/comm/types.h>

namespace brasa::distributed {

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "SUM";
    case ReduceOp::AVG:
      return "AVG";
    case ReduceOp::PRODUCT:
      return "PRODUCT";
    case ReduceOp::MIN:
      return "MIN";
    case ReduceOp::MAX:
      return "MAX";
    case ReduceOp::BAND:
      return "BAND";
    case ReduceOp::BOR:
      return "BOR";
    case ReduceOp::BXOR:
      return "BXOR";
  }
  return "?";
}

bool Work::is_completed() {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ && !error_;
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

bool Work::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (timeout.count() < 0) {
    done_cv_.wait(lock, [&] { return completed_; });
  } else if (!done_cv_.wait_for(lock, timeout, [&] { return completed_; })) {
    BRASA_DIST_THROW(DistTimeoutError, op_, ": Work.wait timed out after ", timeout.count(), " ms");
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

void Work::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    completed_ = true;
    error_ = error;
  }
  done_cv_.notify_all();
}

std::shared_ptr<Work> completed_work(std::string op, std::vector<Tensor> outputs) {
  auto w = std::make_shared<Work>(std::move(op));
  w->set_outputs(std::move(outputs));
  w->finish();
  return w;
}

}  // namespace brasa::distributed
