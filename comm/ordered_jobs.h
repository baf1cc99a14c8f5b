#pragma once
// The jobs of a process group (its collectives), run one at a time in the
// order they were given: in the caller's thread, or queued for the group's
// worker thread (background mode, which overlaps them with the caller's
// work). Internal to brasa_comm.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace brasa::distributed::detail {

class OrderedJobs {
 public:
  explicit OrderedJobs(bool background);
  // Runs what is still queued, then stops the worker.
  ~OrderedJobs();
  OrderedJobs(const OrderedJobs&) = delete;
  OrderedJobs& operator=(const OrderedJobs&) = delete;

  // Runs `job` now (inline) or queues it (background).
  void run(std::function<void()> job);
  // The queued jobs, taken out (abort runs them so that each fails its Work).
  std::deque<std::function<void()>> take_queued();

 private:
  void loop();

  const bool background_;
  std::mutex exec_mu_;  // inline jobs run one at a time
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queued_;  // under mu_
  bool stop_ = false;                         // under mu_
  std::thread worker_;
};

}  // namespace brasa::distributed::detail
