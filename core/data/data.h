#pragma once
// Datasets, samplers and an in-process DataLoader (libtorch's torch::data
// shape, reduced to what batch training needs).
#include <brasa/ops/random.h>
#include <brasa/tensor/tensor.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <string>
#include <vector>

namespace brasa::data {

template <class Data = Tensor, class Target = Tensor>
struct Example {
  Data data;
  Target target;
};

namespace example {
using NoTarget = void;
}  // namespace example
// An example without a target (libtorch's TensorExample). Brasa's batches
// are Example<> with an undefined target; they convert to this.
template <class Data>
struct Example<Data, example::NoTarget> {
  Example() = default;
  Example(Data d) : data(std::move(d)) {}                  // NOLINT: implicit, as libtorch's
  Example(Example<> e) : data(std::move(e.data)) {}        // NOLINT
  operator Example<>() const { return {data, Tensor()}; }  // NOLINT
  Data data;
};
using TensorExample = Example<Tensor, example::NoTarget>;

// A dataset of (data[i], target[i]) rows of two tensors, or of data[i]
// alone (the target undefined): libtorch's TensorDataset(tensor).
class TensorDataset {
 public:
  TensorDataset(Tensor data, Tensor targets);
  explicit TensorDataset(Tensor data);
  Example<> get(int64_t i) const;
  // A whole batch at once (rows gathered with index_select).
  Example<> get_batch(const std::vector<int64_t>& indices) const;
  // As libtorch: an optional, which a sized dataset always fills.
  std::optional<size_t> size() const { return static_cast<size_t>(data_.size(0)); }
  // dataset.map(transform): the transform applies to every batch.
  template <class T>
  auto map(T transform) const;
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 protected:
  Tensor data_, targets_;
};

namespace detail {
// Stacks the data and the targets of `examples` along a new dim 0.
Example<> stack_examples(const std::vector<Example<>>& examples);
// A dataset's size() (an optional<size_t>, as in libtorch, which must hold a
// value to be loaded) as an int64_t.
inline int64_t size_of(std::optional<size_t> n) {
  BRASA_CHECK(
      n.has_value(),
      "DataLoader: the dataset's size() returned nullopt; only sized datasets can be loaded");
  return static_cast<int64_t>(*n);
}
}  // namespace detail

template <class Dataset, class Transform>
class MapDataset;

namespace datasets {
using data::TensorDataset;
// libtorch's Dataset<Self>: a user dataset defines get(index) and size();
// batches are its examples stacked (libtorch's Stack<> transform, built in).
// Thread workers call get() concurrently, so it must be thread-safe.
//   struct Pairs : data::datasets::Dataset<Pairs> {
//     data::Example<> get(size_t i) override { ... }
//     std::optional<size_t> size() const override { return n; }
//   };
template <class Self, class SingleExample = Example<>>
class Dataset {
  static_assert(std::is_same_v<SingleExample, Example<>>,
                "Dataset: examples must be Example<Tensor, Tensor>");

 public:
  using ExampleType = SingleExample;
  virtual ~Dataset() = default;
  virtual ExampleType get(size_t index) = 0;
  virtual std::optional<size_t> size() const = 0;
  Example<> get_batch(const std::vector<int64_t>& indices) const {
    std::vector<Example<>> examples;
    examples.reserve(indices.size());
    // get() is non-const as in libtorch; the loader holds its own copy of the dataset.
    auto& self = const_cast<Dataset&>(*this);
    for (int64_t i : indices) examples.push_back(self.get(static_cast<size_t>(i)));
    return detail::stack_examples(examples);
  }
  template <class T>
  MapDataset<Self, T> map(T transform) const {
    return MapDataset<Self, T>(static_cast<const Self&>(*this), std::move(transform));
  }
};

// MNIST / Fashion-MNIST from IDX files, plain or gzipped. Images become
// float [N, 1, 28, 28] in [0, 1]; targets int64 [N].
class MNIST : public TensorDataset {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root = "/usr/share/datasets/fashion-mnist",
                 Mode mode = Mode::kTrain);
  const Tensor& images() const { return data_; }
  bool is_train() const { return train_; }

 private:
  bool train_;
};
}  // namespace datasets

namespace samplers {
// Yields every index of [0, size) once per epoch, in order or shuffled.
class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual void reset(std::optional<int64_t> new_size = std::nullopt) = 0;
  // Up to batch_size next indices; empty at the end of the epoch.
  virtual std::vector<int64_t> next(int64_t batch_size) = 0;
  // Epoch-seeded samplers (the distributed ones) reshuffle per epoch.
  virtual void set_epoch(int64_t) {}
};

class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t size) : size_(size) {}
  void reset(std::optional<int64_t> new_size = std::nullopt) override;
  std::vector<int64_t> next(int64_t batch_size) override;

 private:
  int64_t size_, pos_ = 0;
};

// A fresh permutation per reset(), from the global generator (manual_seed
// makes epochs reproducible).
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t size) : size_(size) { reset(); }
  void reset(std::optional<int64_t> new_size = std::nullopt) override;
  std::vector<int64_t> next(int64_t batch_size) override;

 private:
  int64_t size_, pos_ = 0;
  std::vector<int64_t> order_;
};
// One replica's share of the dataset (PyTorch's DistributedSampler): the
// indices (shuffled with seed + epoch, identically on every replica) are
// padded by wrapping around to a multiple of num_replicas (or cut, without
// allow_duplicates), and replica r takes every num_replicas-th from r.
// Across replicas each sample appears exactly once per epoch (plus the
// padding duplicates).
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t size, int64_t num_replicas, int64_t rank, bool shuffle,
                     bool allow_duplicates = true, uint64_t seed = 0);
  void reset(std::optional<int64_t> new_size = std::nullopt) override;
  std::vector<int64_t> next(int64_t batch_size) override;
  void set_epoch(int64_t epoch) override { epoch_ = epoch; }
  int64_t local_size() const;

 private:
  int64_t size_, replicas_, rank_;
  bool shuffle_, allow_duplicates_;
  uint64_t seed_;
  int64_t epoch_ = 0, pos_ = 0;
  std::vector<int64_t> mine_;
};
class DistributedRandomSampler : public DistributedSampler {
 public:
  DistributedRandomSampler(int64_t size, int64_t num_replicas = 1, int64_t rank = 0,
                           bool allow_duplicates = true)
      : DistributedSampler(size, num_replicas, rank, true, allow_duplicates) {}
};
class DistributedSequentialSampler : public DistributedSampler {
 public:
  DistributedSequentialSampler(int64_t size, int64_t num_replicas = 1, int64_t rank = 0,
                               bool allow_duplicates = true)
      : DistributedSampler(size, num_replicas, rank, false, allow_duplicates) {}
};
}  // namespace samplers

struct DataLoaderOptions {
  DataLoaderOptions(int64_t batch_size = 1) : batch_size_(batch_size) {}
  DataLoaderOptions& batch_size(int64_t b) {
    batch_size_ = b;
    return *this;
  }
  DataLoaderOptions& drop_last(bool d) {
    drop_last_ = d;
    return *this;
  }
  // Threads that assemble batches ahead of the training loop (0: in the caller).
  DataLoaderOptions& workers(int64_t w) {
    workers_ = w;
    return *this;
  }
  // Batches a worker may be ahead of the consumer, per worker.
  DataLoaderOptions& prefetch_factor(int64_t f) {
    prefetch_factor_ = f;
    return *this;
  }
  // Workers are forked processes instead of threads (brasa_multiprocessing):
  // batches come back in shared memory, in order. See get_worker_info().
  DataLoaderOptions& process_workers(bool v) {
    process_workers_ = v;
    return *this;
  }
  // Process workers live across epochs (and keep their dataset's state).
  DataLoaderOptions& persistent_workers(bool v) {
    persistent_workers_ = v;
    return *this;
  }
  // Process workers: the longest wait for one batch (0: no limit).
  DataLoaderOptions& timeout(std::chrono::milliseconds v) {
    timeout_ = v;
    return *this;
  }
  // Runs first thing in each process worker, with its id, after seeding.
  DataLoaderOptions& worker_init_fn(std::function<void(int64_t)> f) {
    worker_init_fn_ = std::move(f);
    return *this;
  }
  int64_t batch_size_;
  bool drop_last_ = false;
  int64_t workers_ = 0, prefetch_factor_ = 2;
  bool process_workers_ = false, persistent_workers_ = false;
  std::chrono::milliseconds timeout_{0};
  std::function<void(int64_t)> worker_init_fn_;
};

// In a DataLoader worker process: its id, the number of workers and the seed
// it was given (torch.utils.data.get_worker_info); nullopt elsewhere.
struct WorkerInfo {
  int64_t id = 0;
  int64_t num_workers = 0;
  uint64_t seed = 0;
};
std::optional<WorkerInfo> get_worker_info();

namespace detail {
void set_worker_info(std::optional<WorkerInfo> info);

// Process workers, provided by brasa_multiprocessing (multiprocessing/
// dataloader_workers.h), which registers its factory here.
class ProcessWorkers {
 public:
  virtual ~ProcessWorkers() = default;
  // Starts an epoch over the batches of `plan` (kept alive by the caller
  // until the next start_epoch); base_seed seeds workers started now.
  virtual void start_epoch(const std::vector<std::vector<int64_t>>& plan, uint64_t base_seed) = 0;
  virtual bool next(Example<>& out) = 0;
};
struct ProcessWorkerSpec {
  int64_t workers = 1, prefetch_factor = 2;
  bool persistent = false;
  std::chrono::milliseconds timeout{0};
  std::function<void(int64_t)> init_fn;
  std::function<Example<>(const std::vector<int64_t>&)> get_batch;
};
using ProcessWorkersFactory = std::unique_ptr<ProcessWorkers> (*)(ProcessWorkerSpec spec);
void register_process_workers(ProcessWorkersFactory factory);
std::unique_ptr<ProcessWorkers> make_process_workers(ProcessWorkerSpec spec);
// A seed for the workers of one epoch, from the default generator.
uint64_t draw_worker_seed();

// Thread workers that produce batches 0..n-1 of an epoch and hand them out
// in order; an exception in a worker is rethrown to the consumer.
class Prefetcher {
 public:
  Prefetcher(int64_t n_batches, int64_t workers, int64_t window,
             std::function<Example<>(int64_t)> make);
  ~Prefetcher();
  bool next(Example<>& out);

 private:
  void work();
  std::function<Example<>(int64_t)> make_;
  int64_t n_, window_, next_claim_ = 0, next_out_ = 0;
  // Finished batches by index, each with the error its worker raised (if any):
  // errors reach the caller in batch order, like the batches.
  std::map<int64_t, std::pair<Example<>, std::exception_ptr>> ready_;
  bool stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
};
}  // namespace detail

// Iterates batches (Example<> with stacked data and targets) of a dataset
// that has size() and get_batch(indices). Each begin() starts an epoch.
template <class Dataset>
class DataLoader {
 public:
  DataLoader(Dataset dataset, DataLoaderOptions options, std::unique_ptr<samplers::Sampler> sampler)
      : dataset_(std::move(dataset)), options_(options), sampler_(std::move(sampler)) {
    BRASA_CHECK(options_.batch_size_ > 0, "DataLoader: batch_size must be positive, got ",
                options_.batch_size_);
    BRASA_CHECK(options_.workers_ >= 0, "DataLoader: workers must be >= 0, got ",
                options_.workers_);
  }
  class Iterator {
   public:
    Iterator(DataLoader* loader) : loader_(loader) { advance(); }
    Iterator() = default;
    Example<>& operator*() { return batch_; }
    Example<>* operator->() { return &batch_; }
    Iterator& operator++() {
      advance();
      return *this;
    }
    bool operator!=(const Iterator& o) const { return loader_ != o.loader_; }

   private:
    void advance() {
      if (!loader_->next(batch_)) loader_ = nullptr;
    }
    DataLoader* loader_ = nullptr;
    Example<> batch_;
  };
  Iterator begin() {
    start_epoch();
    return Iterator(this);
  }
  Iterator end() { return Iterator(); }
  Dataset& dataset() { return dataset_; }
  samplers::Sampler& sampler() { return *sampler_; }

 private:
  void start_epoch() {
    prefetcher_.reset();
    if (!options_.persistent_workers_) process_workers_.reset();
    sampler_->reset();
    plan_.clear();
    next_ = 0;
    for (auto idx = sampler_->next(options_.batch_size_); !idx.empty();
         idx = sampler_->next(options_.batch_size_)) {
      if (options_.drop_last_ && static_cast<int64_t>(idx.size()) < options_.batch_size_) break;
      plan_.push_back(std::move(idx));
    }
    if (options_.workers_ > 0 && options_.process_workers_) {
      if (!process_workers_) {
        detail::ProcessWorkerSpec spec;
        spec.workers = options_.workers_;
        spec.prefetch_factor = options_.prefetch_factor_;
        spec.persistent = options_.persistent_workers_;
        spec.timeout = options_.timeout_;
        spec.init_fn = options_.worker_init_fn_;
        // Runs in the forked worker, on its copy of this loader.
        spec.get_batch = [this](const std::vector<int64_t>& idx) {
          return dataset_.get_batch(idx);
        };
        process_workers_ = detail::make_process_workers(std::move(spec));
      }
      process_workers_->start_epoch(plan_, detail::draw_worker_seed());
    } else if (options_.workers_ > 0)
      prefetcher_ = std::make_unique<detail::Prefetcher>(
          static_cast<int64_t>(plan_.size()), options_.workers_,
          options_.workers_ * options_.prefetch_factor_,
          [this](int64_t i) { return dataset_.get_batch(plan_[i]); });
  }
  bool next(Example<>& out) {
    if (process_workers_) return process_workers_->next(out);
    if (prefetcher_) return prefetcher_->next(out);
    if (next_ >= plan_.size()) return false;
    out = dataset_.get_batch(plan_[next_++]);
    return true;
  }

  Dataset dataset_;
  DataLoaderOptions options_;
  std::unique_ptr<samplers::Sampler> sampler_;
  std::vector<std::vector<int64_t>> plan_;
  size_t next_ = 0;
  std::unique_ptr<detail::Prefetcher> prefetcher_;
  std::unique_ptr<detail::ProcessWorkers> process_workers_;
};

template <class T>
auto TensorDataset::map(T transform) const {
  return MapDataset<TensorDataset, T>(*this, std::move(transform));
}

template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<DataLoader<Dataset>> make_data_loader(Dataset dataset,
                                                      DataLoaderOptions options = {}) {
  int64_t n = detail::size_of(dataset.size());
  return std::make_unique<DataLoader<Dataset>>(std::move(dataset), options,
                                               std::make_unique<Sampler>(n));
}
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<DataLoader<Dataset>> make_data_loader(Dataset dataset, int64_t batch_size) {
  return make_data_loader<Sampler>(std::move(dataset), DataLoaderOptions(batch_size));
}
// With a sampler built by the caller (e.g. DistributedRandomSampler).
template <class Dataset, class Sampler>
std::unique_ptr<DataLoader<Dataset>> make_data_loader(Dataset dataset, Sampler sampler,
                                                      DataLoaderOptions options) {
  return std::make_unique<DataLoader<Dataset>>(std::move(dataset), options,
                                               std::make_unique<Sampler>(std::move(sampler)));
}

}  // namespace brasa::data
