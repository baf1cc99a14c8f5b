#pragma once
// The NCCL watchdog's logic, apart from NCCL so that it is tested without a
// GPU: collectives are enqueued on the device and return at once, so a rank
// whose peer died or diverged would otherwise hang in its next
// synchronisation forever. The watchdog polls every operation in flight, in
// issue order:
//  - done on the device: its Work completes;
//  - the communicator reports an asynchronous error: that error;
//  - running longer than its timeout: "Watchdog caught collective operation
//    timeout: WorkNCCL(SeqNum=.., OpType=.., ...) ran for .. milliseconds
//    before timing out." (a DistTimeoutError; the others are DistBackendError)
// On an error or timeout the communicator is aborted (which makes every
// kernel of it return), every Work in flight fails with the message, and
// the group refuses further work. The clock is injected.
#include <brasa/comm/work.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace brasa::distributed {

// An operation in flight, as the watchdog sees it.
class WatchedOp {
 public:
  using Clock = std::chrono::steady_clock;
  WatchedOp(std::shared_ptr<Work> work, uint64_t seq, std::string op_type, int64_t numel,
            Clock::time_point start, std::chrono::milliseconds timeout)
      : work(std::move(work)),
        seq(seq),
        op_type(std::move(op_type)),
        numel(numel),
        start(start),
        timeout(timeout) {}
  virtual ~WatchedOp() = default;
  // Whether the device finished it (its end event completed).
  virtual bool device_done() = 0;

  std::shared_ptr<Work> work;
  uint64_t seq;
  std::string op_type;  // "ALLREDUCE"
  int64_t numel;
  Clock::time_point start;
  std::chrono::milliseconds timeout;
};

// "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1024, Timeout(ms)=600000)"
std::string describe(const WatchedOp& op);

class Watchdog {
 public:
  using Clock = WatchedOp::Clock;
  struct Hooks {
    std::function<Clock::time_point()> now = [] { return Clock::now(); };
    // The communicator's asynchronous error ("" when none).
    std::function<std::string()> async_error = [] { return std::string(); };
    // Aborts the communicator (called once, with the reason).
    std::function<void(const std::string&)> abort = [](const std::string&) {};
  };
  explicit Watchdog(Hooks hooks);
  ~Watchdog();  // stops the thread; works still in flight fail ("the group was destroyed")
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Refused (with the failure) once the group has failed.
  void watch(std::unique_ptr<WatchedOp> op);
  // One pass over the operations in flight; returns how many remain.
  size_t poll();
  // Polls every `interval` on a thread of its own until destroyed.
  void start(std::chrono::milliseconds interval);
  // The failure that stopped the group ("" while healthy).
  std::string failure() const;
  size_t in_flight() const;

 private:
  void fail_all(const std::string& reason, bool timeout);
  Hooks hooks_;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  std::deque<std::unique_ptr<WatchedOp>> ops_;
  std::string failure_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace brasa::distributed
