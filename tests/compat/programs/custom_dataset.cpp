// A custom dataset as libtorch users write one: a Dataset<Self> with get()
// and size(), an ExpandingArray for the image size, and a model built with
// Sequential and Functional(fn, extra_args...). Only the include differs
// from a libtorch program. The images are stripes, horizontal (label 0) or
// vertical (label 1), under noise; the program exits 0 when the model
// learned to tell them apart.
#include <brasa/torch.h>

#include <cstdio>
#include <iostream>

class Stripes : public torch::data::datasets::Dataset<Stripes> {
 public:
  Stripes(size_t count, torch::ExpandingArray<2> image_size)
      : count_(count), image_size_(image_size) {}

  torch::data::Example<> get(size_t index) override {
    const int64_t h = (*image_size_)[0], w = (*image_size_)[1];
    const int64_t label = static_cast<int64_t>(index % 2);
    const double phase = 0.7 * static_cast<double>(index % 5);
    torch::Tensor rows = torch::sin(torch::arange(h, torch::kFloat) * 1.3 + phase);
    torch::Tensor cols = torch::sin(torch::arange(w, torch::kFloat) * 1.3 + phase);
    torch::Tensor image =
        label == 0 ? rows.unsqueeze(1).expand({h, w}) : cols.unsqueeze(0).expand({h, w});
    image = image + 0.8 * torch::randn({h, w});
    return {image.unsqueeze(0), torch::tensor(label)};
  }

  torch::optional<size_t> size() const override { return count_; }

 private:
  size_t count_;
  torch::ExpandingArray<2> image_size_;
};

int main() {
  torch::manual_seed(0);
  const torch::ExpandingArray<2> image_size({12, 10});
  auto train_set = Stripes(512, image_size).map(torch::data::transforms::Stack<>());
  auto test_set = Stripes(200, image_size).map(torch::data::transforms::Stack<>());
  const size_t train_size = train_set.size().value();

  torch::nn::Sequential model(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 3).padding(1)),
                              torch::nn::Functional(torch::leaky_relu, /*negative_slope=*/0.1),
                              torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)),
                              torch::nn::Flatten(), torch::nn::Linear(6 * 6 * 5, 2));
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));

  auto train_loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(train_set), torch::data::DataLoaderOptions().batch_size(32).workers(2));
  for (int epoch = 1; epoch <= 3; ++epoch) {
    model->train();
    double total = 0;
    for (auto& batch : *train_loader) {
      optimizer.zero_grad();
      torch::Tensor loss =
          torch::nn::functional::cross_entropy(model->forward(batch.data), batch.target);
      loss.backward();
      optimizer.step();
      total += loss.item<double>() * batch.data.size(0);
    }
    std::printf("epoch %d train loss %.4f\n", epoch, total / static_cast<double>(train_size));
  }

  model->eval();
  torch::NoGradGuard no_grad;
  auto test_loader = torch::data::make_data_loader(std::move(test_set), 50);
  int64_t correct = 0, seen = 0;
  for (const auto& batch : *test_loader) {
    torch::Tensor predicted = model->forward(batch.data).argmax(1);
    correct += predicted.eq(batch.target).sum().item<int64_t>();
    seen += batch.data.size(0);
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(seen);
  std::cout << "test accuracy " << accuracy << "\n" << *model << "\n";
  return accuracy > 0.9 ? 0 : 1;
}
