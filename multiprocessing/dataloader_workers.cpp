#include <brasa/data/data.h>
#include <brasa/multiprocessing/dataloader_workers.h>
#include <brasa/multiprocessing/processes.h>
#include <brasa/multiprocessing/queue.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/random.h>
#include <brasa/tensor/shared_memory.h>
#include <brasa/tensor/tensor_impl.h>
#include <brasa/util/parallel.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>

namespace brasa::multiprocessing::detail {

namespace {

using data::Example;

class ProcessWorkerPool final : public data::detail::ProcessWorkers {
 public:
  explicit ProcessWorkerPool(data::detail::ProcessWorkerSpec spec) : spec_(std::move(spec)) {}

  ~ProcessWorkerPool() override {
    if (!ctx_) return;
    // Ask the workers to leave; the context stops those that do not.
    for (auto& q : tasks_) {
      try {
        q->put(IValue(), std::chrono::milliseconds(100));
      } catch (...) {
      }
    }
    try {
      ctx_->join(std::chrono::milliseconds(500));
    } catch (...) {
    }
  }

  void start_epoch(const std::vector<std::vector<int64_t>>& plan, uint64_t base_seed) override {
    if (!ctx_) start_workers(base_seed);
    ++epoch_;  // results of an epoch left early are recognized and dropped
    plan_ = &plan;
    next_send_ = next_out_ = 0;
    ready_.clear();
    while (next_send_ < plan.size() && next_send_ < window()) send_next();
  }

  bool next(Example<>& out) override {
    if (next_out_ >= plan_->size()) return false;
    const auto start = std::chrono::steady_clock::now();
    while (!ready_.count(next_out_)) {
      check_workers();
      std::optional<IValue> v;
      try {
        v = results_->get(std::chrono::milliseconds(50));
      } catch (const Error& e) {
        if (std::string(e.what()).find("timed out") == std::string::npos) {
          check_workers();  // a dead worker: say which, in the DataLoader's words
          throw;
        }
      }
      if (!v) {
        const auto waited = std::chrono::steady_clock::now() - start;
        BRASA_CHECK(spec_.timeout.count() == 0 || waited < spec_.timeout,
                    "DataLoader timed out after ", spec_.timeout.count(), " ms waiting for batch ",
                    next_out_, " from worker ", next_out_ % spec_.workers);
        continue;
      }
      receive(*v);
    }
    out = std::move(ready_[next_out_]);
    ready_.erase(next_out_);
    ++next_out_;
    if (next_send_ < plan_->size()) send_next();
    return true;
  }

 private:
  size_t window() const { return static_cast<size_t>(spec_.workers * spec_.prefetch_factor); }

  void start_workers(uint64_t base_seed) {
    for (int64_t w = 0; w < spec_.workers; ++w) tasks_.push_back(std::make_unique<Queue>());
    results_ = std::make_unique<Queue>();
    ctx_ = start_processes(
        [this, base_seed](int w) { work(w, base_seed); }, static_cast<int>(spec_.workers),
        ProcessOptions().join(false).grace_period(std::chrono::milliseconds(200)));
  }

  void send_next() {
    const size_t i = next_send_++;
    std::vector<int64_t> task{static_cast<int64_t>(epoch_), static_cast<int64_t>(i)};
    const auto& idx = (*plan_)[i];
    task.insert(task.end(), idx.begin(), idx.end());
    tasks_[i % tasks_.size()]->put(IValue(std::move(task)));
  }

  // A dead worker is an error now, not a hang.
  void check_workers() {
    try {
      ctx_->join(std::chrono::milliseconds(0));
    } catch (const ProcessExitedException& e) {
      if (e.exit_code < 0)
        BRASA_ERROR("DataLoader worker (pid ", e.pid,
                    ") is killed by signal: ", strsignal(-e.exit_code), ".");
      BRASA_ERROR("DataLoader worker (pid ", e.pid, ") exited unexpectedly with exit code ",
                  e.exit_code, ".");
    } catch (const ProcessRaisedException& e) {
      BRASA_ERROR("DataLoader worker (pid ", e.pid, ") failed: ", e.what());
    }
  }

  void receive(const IValue& v) {
    if (v.isString()) {  // "<epoch> <index> <worker> <pid> <message>" from a failed get_batch
      const std::string& s = v.toStringRef();
      unsigned long long epoch = 0, index = 0, worker = 0, pid = 0;
      int used = 0;
      std::sscanf(s.c_str(), "%llu %llu %llu %llu %n", &epoch, &index, &worker, &pid, &used);
      if (epoch != epoch_) return;
      ++next_out_;  // the failed batch is consumed: iterating on moves to the next one
      if (next_send_ < plan_->size()) send_next();
      BRASA_ERROR("Caught an exception in DataLoader worker process ", worker, " (pid ", pid,
                  ") while loading batch ", index, ":\n", s.substr(static_cast<size_t>(used)));
    }
    const auto& items = v.toTensorItems();
    BRASA_CHECK(items.size() == 3 && items[0].first == "meta",
                "DataLoader: a malformed message from a worker");
    const int64_t* meta = items[0].second.data_ptr<int64_t>();
    if (static_cast<uint64_t>(meta[0]) != epoch_) return;
    ready_[static_cast<size_t>(meta[1])] = Example<>{items[1].second, items[2].second};
  }

  void work(int w, uint64_t base_seed) {
    const uint64_t seed = base_seed + static_cast<uint64_t>(w);
    set_num_threads(1);  // the cores belong to training; workers are many
    manual_seed(seed);
    data::detail::set_worker_info(data::WorkerInfo{w, spec_.workers, seed});
    if (spec_.init_fn) spec_.init_fn(w);
    for (;;) {
      IValue task = tasks_[static_cast<size_t>(w)]->get();
      if (task.isNone()) return;
      std::vector<int64_t> t = task.toIntVector();
      std::vector<int64_t> indices(t.begin() + 2, t.end());
      try {
        results_->put(pack(t[0], t[1], spec_.get_batch(indices)));
      } catch (const std::exception& e) {
        results_->put(IValue(std::to_string(t[0]) + " " + std::to_string(t[1]) + " " +
                             std::to_string(w) + " " + std::to_string(getpid()) + " " + e.what()));
      }
    }
  }

  // One shared allocation per batch holds its epoch and index, its target
  // and its data: one descriptor to pass and one mapping to make per batch.
  static IValue pack(int64_t epoch, int64_t index, const Example<>& batch) {
    auto section = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
    auto bytes_of = [](const Tensor& t) { return t.defined() ? t.numel() * t.element_size() : 0; };
    const int64_t target_at = 64, data_at = target_at + section(bytes_of(batch.target));
    Storage storage = Storage::allocate(static_cast<size_t>(data_at + bytes_of(batch.data)),
                                        shared_memory_allocator());
    auto place = [&](const Tensor& t, int64_t at) {
      if (!t.defined()) return Tensor();
      Tensor view(make_intrusive<TensorImpl>(storage, t.scalar_type(), t.sizes(),
                                             contiguous_strides(t.sizes()), at / t.element_size()));
      view.copy_(t);
      return view;
    };
    Tensor meta =
        place(tensor(std::vector<int64_t>{epoch, index}, TensorOptions().dtype(kLong)), 0);
    return IValue(IValue::TensorDict{{"meta", meta},
                                     {"data", place(batch.data, data_at)},
                                     {"target", place(batch.target, target_at)}});
  }

  data::detail::ProcessWorkerSpec spec_;
  std::vector<std::unique_ptr<Queue>> tasks_;
  std::unique_ptr<Queue> results_;
  std::optional<ProcessContext> ctx_;
  uint64_t epoch_ = 0;
  const std::vector<std::vector<int64_t>>* plan_ = nullptr;
  size_t next_send_ = 0, next_out_ = 0;
  std::map<size_t, Example<>> ready_;
};

std::unique_ptr<data::detail::ProcessWorkers> make_pool(data::detail::ProcessWorkerSpec spec) {
  return std::make_unique<ProcessWorkerPool>(std::move(spec));
}

}  // namespace

bool register_dataloader_process_workers() {
  data::detail::register_process_workers(make_pool);
  return true;
}

}  // namespace brasa::multiprocessing::detail
