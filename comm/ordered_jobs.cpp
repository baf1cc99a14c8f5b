#include "ordered_jobs.h"

namespace brasa::distributed::detail {

OrderedJobs::OrderedJobs(bool background) : background_(background) {
  if (background_) worker_ = std::thread([this] { loop(); });
}

OrderedJobs::~OrderedJobs() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void OrderedJobs::run(std::function<void()> job) {
  if (!background_) {
    std::lock_guard<std::mutex> exec(exec_mu_);
    job();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queued_.push_back(std::move(job));
  }
  cv_.notify_one();
}

std::deque<std::function<void()>> OrderedJobs::take_queued() {
  std::deque<std::function<void()>> taken;
  std::lock_guard<std::mutex> lock(mu_);
  taken.swap(queued_);
  return taken;
}

void OrderedJobs::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queued_.empty(); });
    if (queued_.empty()) return;  // stopping, nothing left
    auto job = std::move(queued_.front());
    queued_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace brasa::distributed::detail
