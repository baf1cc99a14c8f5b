#include <brasa/comm/errors.h>
#include <brasa/comm/nccl/watchdog.h>
#include <brasa/util/error.h>

namespace brasa::distributed {

std::string describe(const WatchedOp& op) {
  return brasa::detail::str("WorkNCCL(SeqNum=", op.seq, ", OpType=", op.op_type,
                            ", NumelIn=", op.numel, ", Timeout(ms)=", op.timeout.count(), ")");
}

Watchdog::Watchdog(Hooks hooks) : hooks_(std::move(hooks)) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (!ops_.empty())
    fail_all("NCCL: the process group was destroyed with the operation in flight", false);
}

void Watchdog::watch(std::unique_ptr<WatchedOp> op) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failure_.empty()) {
    op->work->finish(std::make_exception_ptr(DistBackendError(
        brasa::detail::str("NCCL: ", describe(*op),
                           " refused: the process group failed earlier: ", failure_),
        "", __FILE__, __LINE__)));
    return;
  }
  ops_.push_back(std::move(op));
}

// Under mu_: fails every operation in flight with `reason`, once.
void Watchdog::fail_all(const std::string& reason, bool timeout) {
  if (failure_.empty()) failure_ = reason;
  auto error = timeout ? std::make_exception_ptr(DistTimeoutError(reason, "", __FILE__, __LINE__))
                       : std::make_exception_ptr(DistBackendError(reason, "", __FILE__, __LINE__));
  for (auto& op : ops_) op->work->finish(error);
  ops_.clear();
}

size_t Watchdog::poll() {
  std::unique_lock<std::mutex> lock(mu_);
  const auto now = hooks_.now();
  std::string reason;
  bool timeout = false;
  if (!ops_.empty()) {
    std::string async = hooks_.async_error();
    if (!async.empty())
      reason = brasa::detail::str("NCCL communicator error while ", describe(*ops_.front()),
                                  " was in flight: ", async);
  }
  while (reason.empty() && !ops_.empty()) {
    WatchedOp& op = *ops_.front();
    bool done = false;
    try {
      done = op.device_done();
    } catch (const std::exception& e) {  // the device itself failed
      reason = brasa::detail::str("NCCL: ", describe(op), " failed on the device: ", e.what());
      break;
    }
    if (done) {
      op.work->finish();
      ops_.pop_front();
      continue;
    }
    // Later operations cannot finish before this one on the same stream,
    // but each has its own timeout.
    for (auto& o : ops_) {
      const auto ran = std::chrono::duration_cast<std::chrono::milliseconds>(now - o->start);
      if (ran > o->timeout) {
        reason = brasa::detail::str("Watchdog caught collective operation timeout: ", describe(*o),
                                    " ran for ", ran.count(), " milliseconds before timing out.");
        timeout = true;
        break;
      }
    }
    break;
  }
  if (!reason.empty()) {
    fail_all(reason, timeout);
    lock.unlock();
    hooks_.abort(reason);  // outside the lock: aborting may take a while
    return 0;
  }
  return ops_.size();
}

void Watchdog::start(std::chrono::milliseconds interval) {
  thread_ = std::thread([this, interval] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      lock.unlock();
      poll();
      lock.lock();
      stop_cv_.wait_for(lock, interval, [this] { return stopping_; });
    }
  });
}

std::string Watchdog::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

size_t Watchdog::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_.size();
}

}  // namespace brasa::distributed
