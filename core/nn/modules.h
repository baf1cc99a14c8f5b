#pragma once
// The layers of the main job and their holders: Linear, Conv2d, MaxPool2d,
// ReLU, Dropout, Flatten, Sequential.
#include <brasa/nn/module.h>

#include <vector>

namespace brasa::nn {

struct LinearOptions {
  LinearOptions(int64_t in, int64_t out) : in_features_(in), out_features_(out) {}
  LinearOptions& bias(bool b) { bias_ = b; return *this; }
  int64_t in_features_, out_features_;
  bool bias_ = true;
};
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in, int64_t out) : LinearImpl(LinearOptions(in, out)) {}
  explicit LinearImpl(const LinearOptions& o);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  LinearOptions options;
  Tensor weight, bias;
};
BRASA_MODULE(Linear);

struct Conv2dOptions {
  Conv2dOptions(int64_t in, int64_t out, int64_t kernel) : Conv2dOptions(in, out, {kernel, kernel}) {}
  Conv2dOptions(int64_t in, int64_t out, std::vector<int64_t> kernel)
      : in_channels_(in), out_channels_(out), kernel_size_(std::move(kernel)) {}
  Conv2dOptions& stride(std::vector<int64_t> s) { stride_ = expand(s); return *this; }
  Conv2dOptions& stride(int64_t s) { stride_ = {s, s}; return *this; }
  Conv2dOptions& padding(int64_t p) { padding_ = {p, p}; return *this; }
  Conv2dOptions& padding(std::vector<int64_t> p) { padding_ = expand(p); return *this; }
  Conv2dOptions& dilation(int64_t d) { dilation_ = {d, d}; return *this; }
  Conv2dOptions& groups(int64_t g) { groups_ = g; return *this; }
  Conv2dOptions& bias(bool b) { bias_ = b; return *this; }
  static std::vector<int64_t> expand(std::vector<int64_t> v) { return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v; }
  int64_t in_channels_, out_channels_;
  std::vector<int64_t> kernel_size_, stride_{1, 1}, padding_{0, 0}, dilation_{1, 1};
  int64_t groups_ = 1;
  bool bias_ = true;
};
class Conv2dImpl : public Module {
 public:
  Conv2dImpl(int64_t in, int64_t out, int64_t kernel) : Conv2dImpl(Conv2dOptions(in, out, kernel)) {}
  explicit Conv2dImpl(const Conv2dOptions& o);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  Conv2dOptions options;
  Tensor weight, bias;
};
BRASA_MODULE(Conv2d);

struct MaxPool2dOptions {
  MaxPool2dOptions(int64_t k) : kernel_size_({k, k}) {}
  MaxPool2dOptions(std::vector<int64_t> k) : kernel_size_(std::move(k)) {}
  MaxPool2dOptions& stride(int64_t s) { stride_ = {s, s}; return *this; }
  MaxPool2dOptions& padding(int64_t p) { padding_ = {p, p}; return *this; }
  std::vector<int64_t> kernel_size_, stride_, padding_{0, 0};
};
class MaxPool2dImpl : public Module {
 public:
  MaxPool2dImpl(const MaxPool2dOptions& o) : Module("MaxPool2d"), options(o) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  MaxPool2dOptions options;
};
BRASA_MODULE(MaxPool2d);

class ReLUImpl : public Module {
 public:
  explicit ReLUImpl(bool inplace = false) : Module("ReLU"), inplace_(inplace) {}
  Tensor forward(const Tensor& x);
  bool inplace_;
};
BRASA_MODULE(ReLU);

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5) : Module("Dropout"), p(p) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  double p;
};
BRASA_MODULE(Dropout);

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& x);
  int64_t start_dim, end_dim;
};
BRASA_MODULE(Flatten);

// Runs its modules in order; each must have Tensor forward(const Tensor&).
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <class... Holders>
  explicit SequentialImpl(Holders&&... hs) : Module("Sequential") {
    (push_back(std::forward<Holders>(hs)), ...);
  }
  template <class Holder>
  void push_back(Holder h) {
    push_back(std::to_string(steps_.size()), std::move(h));
  }
  template <class Holder>
  void push_back(const std::string& name, Holder h) {
    auto p = h.ptr();
    register_module(name, p);
    steps_.push_back([p](const Tensor& x) { return p->forward(x); });
  }
  Tensor forward(const Tensor& x);
  size_t size() const { return steps_.size(); }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> steps_;
};
BRASA_MODULE(Sequential);

}  // namespace brasa::nn
