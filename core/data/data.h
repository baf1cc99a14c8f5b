#pragma once
// Datasets, samplers and an in-process DataLoader (libtorch's torch::data
// shape, reduced to what batch training needs).
#include <brasa/ops/random.h>
#include <brasa/tensor/tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace brasa::data {

template <class Data = Tensor, class Target = Tensor>
struct Example {
  Data data;
  Target target;
};

// A dataset of (data[i], target[i]) rows of two tensors.
class TensorDataset {
 public:
  TensorDataset(Tensor data, Tensor targets);
  Example<> get(int64_t i) const;
  // A whole batch at once (rows gathered with index_select).
  Example<> get_batch(const std::vector<int64_t>& indices) const;
  int64_t size() const { return data_.size(0); }
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 protected:
  Tensor data_, targets_;
};

namespace datasets {
// MNIST / Fashion-MNIST from IDX files, plain or gzipped. Images become
// float [N, 1, 28, 28] in [0, 1]; targets int64 [N].
class MNIST : public TensorDataset {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root = "/usr/share/datasets/fashion-mnist", Mode mode = Mode::kTrain);
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
}  // namespace samplers

struct DataLoaderOptions {
  DataLoaderOptions(int64_t batch_size = 1) : batch_size_(batch_size) {}
  DataLoaderOptions& batch_size(int64_t b) { batch_size_ = b; return *this; }
  DataLoaderOptions& drop_last(bool d) { drop_last_ = d; return *this; }
  int64_t batch_size_;
  bool drop_last_ = false;
};

// Iterates batches (Example<> with stacked data and targets) of a dataset
// that has size() and get_batch(indices).
template <class Dataset>
class DataLoader {
 public:
  DataLoader(Dataset dataset, DataLoaderOptions options, std::unique_ptr<samplers::Sampler> sampler)
      : dataset_(std::move(dataset)), options_(options), sampler_(std::move(sampler)) {
    BRASA_CHECK(options_.batch_size_ > 0, "DataLoader: batch_size must be positive, got ", options_.batch_size_);
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
      auto idx = loader_->sampler_->next(loader_->options_.batch_size_);
      if (idx.empty() || (loader_->options_.drop_last_ && static_cast<int64_t>(idx.size()) < loader_->options_.batch_size_)) {
        loader_ = nullptr;
        return;
      }
      batch_ = loader_->dataset_.get_batch(idx);
    }
    DataLoader* loader_ = nullptr;
    Example<> batch_;
  };
  // Each begin() starts a new epoch (the sampler is reset).
  Iterator begin() {
    sampler_->reset();
    return Iterator(this);
  }
  Iterator end() { return Iterator(); }
  Dataset& dataset() { return dataset_; }

 private:
  Dataset dataset_;
  DataLoaderOptions options_;
  std::unique_ptr<samplers::Sampler> sampler_;
};

template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<DataLoader<Dataset>> make_data_loader(Dataset dataset, DataLoaderOptions options = {}) {
  int64_t n = dataset.size();
  return std::make_unique<DataLoader<Dataset>>(std::move(dataset), options, std::make_unique<Sampler>(n));
}
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<DataLoader<Dataset>> make_data_loader(Dataset dataset, int64_t batch_size) {
  return make_data_loader<Sampler>(std::move(dataset), DataLoaderOptions(batch_size));
}

}  // namespace brasa::data
