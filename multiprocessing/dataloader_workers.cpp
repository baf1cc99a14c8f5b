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

#include <atomic>
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
    // Made before the fork: both sides map the same flags.
    flags_ = zeros({spec_.workers * kSlots}, TensorOptions().dtype(kInt)).share_memory_();
    buffers_.assign(static_cast<size_t>(spec_.workers), std::vector<Storage>(kSlots + 1));
    own_buffers_.assign(kSlots, Storage());
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
    if (v.isGenericDict()) {  // "buffer <worker> <slot>": a worker's new buffer
      const auto& items = v.toTensorItems();
      unsigned long w = 0;
      long slot = 0;
      BRASA_CHECK(items.size() == 1 &&
                      std::sscanf(items[0].first.c_str(), "buffer %lu %ld", &w, &slot) == 2 &&
                      w < buffers_.size() && slot >= -1 && slot < kSlots,
                  "DataLoader: a malformed message from a worker");
      buffers_[w][static_cast<size_t>(slot + 1)] = items[0].second.storage();
      return;
    }
    BatchHeader h = BatchHeader::read(v.toIntVector(), buffers_.size());
    Storage buffer = buffers_[h.worker][static_cast<size_t>(h.slot + 1)];
    BRASA_CHECK(buffer, "DataLoader: a batch in a buffer the worker did not announce");
    if (h.slot < 0) buffers_[h.worker][0] = Storage();  // a one-off buffer serves one batch
    Storage lease = lease_of(buffer, h.slot < 0 ? nullptr : flag_ptr(h.worker, h.slot));
    if (h.epoch != epoch_) return;  // dropped: the lease gives the buffer back
    ready_[h.index] = Example<>{h.data.view_of(lease), h.target.view_of(lease)};
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
        send_batch(w, t[0], t[1], spec_.get_batch(indices));
      } catch (const std::exception& e) {
        results_->put(IValue(std::to_string(t[0]) + " " + std::to_string(t[1]) + " " +
                             std::to_string(w) + " " + std::to_string(getpid()) + " " + e.what()));
      }
    }
  }

  // ---- the buffer pool ----
  // Each worker collates its batches into shared buffers it reuses: slot s
  // of worker w is in use (flag 1) from the moment the worker fills it until
  // every tensor of that batch is gone in this process, which then clears
  // the flag. A buffer travels (as a descriptor) once, when the worker makes
  // it; after that a batch is a short message of integers — no new segment,
  // descriptor or page fault per batch. A consumer keeping more than kSlots
  // batches alive gets one-off buffers for the rest.
  static constexpr int64_t kSlots = 32;

  int32_t* flag_ptr(size_t worker, int64_t slot) const {
    return flags_.data_ptr<int32_t>() + worker * kSlots + static_cast<size_t>(slot);
  }
  std::atomic_ref<int32_t> flag(size_t worker, int64_t slot) const {
    return std::atomic_ref<int32_t>(*flag_ptr(worker, slot));
  }

  // Where a tensor of a batch lies in its buffer.
  struct Placement {
    int64_t dtype = -1, offset = 0;
    std::vector<int64_t> sizes;
    void write(std::vector<int64_t>& out) const {
      out.push_back(dtype);
      out.push_back(offset);
      out.push_back(static_cast<int64_t>(sizes.size()));
      out.insert(out.end(), sizes.begin(), sizes.end());
    }
    static Placement read(const std::vector<int64_t>& in, size_t& at) {
      Placement p;
      BRASA_CHECK(at + 3 <= in.size(), "DataLoader: a malformed batch message");
      p.dtype = in[at], p.offset = in[at + 1];
      const int64_t dim = in[at + 2];
      at += 3;
      BRASA_CHECK(dim >= 0 && dim <= 64 && at + static_cast<size_t>(dim) <= in.size() &&
                      p.dtype >= -1 && p.dtype < static_cast<int64_t>(ScalarType::Undefined),
                  "DataLoader: a malformed batch message");
      p.sizes.assign(in.begin() + static_cast<int64_t>(at),
                     in.begin() + static_cast<int64_t>(at) + dim);
      at += static_cast<size_t>(dim);
      return p;
    }
    Tensor view_of(const Storage& s) const {
      if (dtype < 0) return Tensor();
      const auto type = static_cast<ScalarType>(dtype);
      const int64_t item = static_cast<int64_t>(elementSize(type));
      int64_t n = 1;
      for (int64_t d : sizes) n *= d;
      BRASA_CHECK(offset >= 0 && offset % item == 0 &&
                      offset + n * item <= static_cast<int64_t>(s->nbytes()),
                  "DataLoader: a batch lies outside its buffer");
      return Tensor(
          make_intrusive<TensorImpl>(s, type, sizes, contiguous_strides(sizes), offset / item));
    }
  };

  struct BatchHeader {
    uint64_t epoch = 0;
    size_t index = 0, worker = 0;
    int64_t slot = 0;
    Placement data, target;
    std::vector<int64_t> write() const {
      std::vector<int64_t> out{static_cast<int64_t>(epoch), static_cast<int64_t>(index),
                               static_cast<int64_t>(worker), slot};
      data.write(out);
      target.write(out);
      return out;
    }
    static BatchHeader read(const std::vector<int64_t>& in, size_t workers) {
      BRASA_CHECK(in.size() >= 4 && in[1] >= 0 && in[2] >= 0 &&
                      static_cast<size_t>(in[2]) < workers && in[3] >= -1 && in[3] < kSlots,
                  "DataLoader: a malformed batch message");
      BatchHeader h;
      h.epoch = static_cast<uint64_t>(in[0]);
      h.index = static_cast<size_t>(in[1]);
      h.worker = static_cast<size_t>(in[2]);
      h.slot = in[3];
      size_t at = 4;
      h.data = Placement::read(in, at);
      h.target = Placement::read(in, at);
      BRASA_CHECK(at == in.size(), "DataLoader: a malformed batch message");
      return h;
    }
  };

  // What the consumer's tensors of one batch hold: the buffer, and the flag
  // that hands it back to its worker when they are all gone.
  struct Lease {
    Storage buffer, flags;
    int32_t* flag;
  };
  static void end_lease(void* ctx) {
    auto* lease = static_cast<Lease*>(ctx);
    if (lease->flag) std::atomic_ref<int32_t>(*lease->flag).store(0, std::memory_order_release);
    delete lease;
  }
  // A storage over `buffer` for one batch's tensors (`slot_flag` null for a
  // one-off buffer).
  Storage lease_of(const Storage& buffer, int32_t* slot_flag) const {
    auto* lease = new Lease{buffer, flags_.storage(), slot_flag};
    DataPtr d(buffer->data(), lease, end_lease, Device(kCPU), AllocationKind::External);
    return Storage(make_intrusive<StorageImpl>(buffer->nbytes(), std::move(d), nullptr, false));
  }

  // In the worker: collates `batch` into a free buffer (made, and announced,
  // when none fits) and sends where it lies.
  void send_batch(int w, int64_t epoch, int64_t index, const Example<>& batch) {
    auto section = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
    auto bytes_of = [](const Tensor& t) { return t.defined() ? t.numel() * t.element_size() : 0; };
    BatchHeader h;
    h.epoch = static_cast<uint64_t>(epoch);
    h.index = static_cast<size_t>(index);
    h.worker = static_cast<size_t>(w);
    const int64_t target_bytes = section(bytes_of(batch.target));
    const size_t need = static_cast<size_t>(target_bytes + bytes_of(batch.data));
    auto& mine = own_buffers_;
    h.slot = -1;
    for (int64_t s = 0; s < kSlots && h.slot < 0; ++s)  // a free buffer that fits
      if (mine[s] && mine[s]->nbytes() >= need &&
          flag(h.worker, s).load(std::memory_order_acquire) == 0)
        h.slot = s;
    for (int64_t s = 0; s < kSlots && h.slot < 0; ++s)  // a free slot: (re)make its buffer
      if (flag(h.worker, s).load() == 0) {
        mine[s] = Storage::allocate(need + need / 4, memfd_allocator());
        announce(w, s, mine[s]);
        h.slot = s;
      }
    Storage buffer;
    if (h.slot >= 0) {
      flag(h.worker, h.slot).store(1, std::memory_order_relaxed);
      buffer = mine[h.slot];
    } else {
      buffer = Storage::allocate(need, memfd_allocator());
      announce(w, -1, buffer);
    }
    auto place = [&](const Tensor& t, int64_t at, Placement& p) {
      if (!t.defined()) return;
      p.dtype = static_cast<int64_t>(t.scalar_type());
      p.offset = at;
      p.sizes = t.sizes().vec();
      p.view_of(buffer).copy_(t);
    };
    place(batch.target, 0, h.target);
    place(batch.data, target_bytes, h.data);
    results_->put(IValue(h.write()));
  }

  void announce(int w, int64_t slot, const Storage& buffer) {
    Tensor whole(make_intrusive<TensorImpl>(
        buffer, kByte, std::vector<int64_t>{static_cast<int64_t>(buffer->nbytes())},
        std::vector<int64_t>{1}, 0));
    results_->put(IValue(
        IValue::TensorDict{{"buffer " + std::to_string(w) + " " + std::to_string(slot), whole}}));
  }

  data::detail::ProcessWorkerSpec spec_;
  std::vector<std::unique_ptr<Queue>> tasks_;
  std::unique_ptr<Queue> results_;
  std::optional<ProcessContext> ctx_;
  uint64_t epoch_ = 0;
  const std::vector<std::vector<int64_t>>* plan_ = nullptr;
  size_t next_send_ = 0, next_out_ = 0;
  std::map<size_t, Example<>> ready_;
  Tensor flags_;                               // [worker * kSlots + slot]: 1 while in use
  std::vector<std::vector<Storage>> buffers_;  // [worker][slot + 1] as mapped here
  std::vector<Storage> own_buffers_;           // in a worker: its buffers
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
