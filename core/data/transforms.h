#pragma once
// Transforms applied by dataset.map(...) to examples and whole batches
// (libtorch's torch::data::transforms). A transform has
//   Example<> operator()(Example<> batch)
// working on a batch [N, ...] (and on one example [...] where noted).
#include <brasa/data/data.h>

#include <functional>
#include <vector>

namespace brasa::data {
namespace transforms {

// (data - mean) / stddev; scalars, or one value per channel (dim 1 of a batch).
template <class Target = Tensor>
struct Normalize {
  Normalize(double mean, double stddev) : mean_({mean}), std_({stddev}) {}
  Normalize(std::vector<double> mean, std::vector<double> stddev)
      : mean_(std::move(mean)), std_(std::move(stddev)) {}
  Example<> operator()(Example<> e) const;
  std::vector<double> mean_, std_;
};

namespace detail {
// Applies `fn` to each example of a batch (dim 0) and stacks the results.
Example<> per_example(Example<> batch, const std::function<Example<>(Example<>)>& fn);
}  // namespace detail

// Applies fn to each example, as libtorch's Lambda<Input, Output> does:
// transforms::Lambda<torch::data::Example<>>([](Example<> e) { ... }).
template <class Input = Example<>, class Output = Input>
struct Lambda {
  explicit Lambda(std::function<Output(Input)> fn) : fn_(std::move(fn)) {}
  Example<> operator()(Example<> batch) const {
    return detail::per_example(
        std::move(batch), [this](Example<> e) -> Example<> { return fn_(Input(std::move(e))); });
  }
  std::function<Output(Input)> fn_;
};

// Applies fn to the data tensor of each example (libtorch's TensorLambda).
template <class Target = Tensor>
struct TensorLambda {
  explicit TensorLambda(std::function<Tensor(Tensor)> fn) : fn_(std::move(fn)) {}
  Example<> operator()(Example<> batch) const {
    return detail::per_example(std::move(batch), [this](Example<> e) {
      return Example<>{fn_(std::move(e.data)), std::move(e.target)};
    });
  }
  std::function<Tensor(Tensor)> fn_;
};

// Batches are already stacked tensors here; Stack keeps libtorch programs
// (dataset.map(Stack<>())) working unchanged.
template <class E = Example<>>
struct Stack {
  Example<> operator()(Example<> e) const { return e; }
};

// Flips each image of a batch [N, C, H, W] left-right with probability p.
struct RandomHorizontalFlip {
  explicit RandomHorizontalFlip(double p = 0.5) : p_(p) {}
  Example<> operator()(Example<> e) const;
  double p_;
};

// Pads each image by `padding` (zeros) and cuts a random size x size window.
struct RandomCrop {
  RandomCrop(int64_t size, int64_t padding = 0) : size_(size), padding_(padding) {}
  Example<> operator()(Example<> e) const;
  int64_t size_, padding_;
};

}  // namespace transforms

// A dataset with a transform applied to every batch it returns.
template <class Dataset, class Transform>
class MapDataset {
 public:
  MapDataset(Dataset d, Transform t) : dataset_(std::move(d)), transform_(std::move(t)) {}
  std::optional<size_t> size() const { return dataset_.size(); }
  Example<> get_batch(const std::vector<int64_t>& indices) const {
    return transform_(dataset_.get_batch(indices));
  }
  Example<> get(int64_t i) const {
    Example<> one = get_batch({i});
    return {one.data[0], one.target[0]};
  }
  template <class T>
  MapDataset<MapDataset, T> map(T t) const {
    return MapDataset<MapDataset, T>(*this, std::move(t));
  }

 private:
  Dataset dataset_;
  Transform transform_;
};

template <class Dataset, class Transform>
MapDataset<Dataset, Transform> map(Dataset d, Transform t) {
  return MapDataset<Dataset, Transform>(std::move(d), std::move(t));
}

namespace transforms {
Example<> normalize(Example<> e, const std::vector<double>& mean,
                    const std::vector<double>& stddev);
template <class T>
Example<> Normalize<T>::operator()(Example<> e) const {
  return normalize(std::move(e), mean_, std_);
}
}  // namespace transforms

}  // namespace brasa::data
