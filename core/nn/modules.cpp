#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/functional.h>
#include <brasa/nn/init.h>
#include <brasa/nn/modules.h>
#include <brasa/ops/conv.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/pooling.h>

#include <cmath>
#include <ostream>

namespace brasa::nn {

// ---- Linear ----
LinearImpl::LinearImpl(const LinearOptions& o) : Module("Linear"), options(o) { reset(); }

void LinearImpl::reset() {
  weight = register_parameter("weight", empty({options.out_features_, options.in_features_}));
  if (options.bias_) bias = register_parameter("bias", empty({options.out_features_}));
  reset_parameters();
}

// PyTorch's default: kaiming_uniform(a = sqrt(5)) for the weight, U(-1/sqrt(in), 1/sqrt(in)) for the bias.
void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = options.in_features_ > 0 ? 1.0 / std::sqrt(static_cast<double>(options.in_features_)) : 0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& x) { return F::linear(x, weight, bias); }

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features_ << ", out_features=" << options.out_features_
     << ", bias=" << (options.bias_ ? "true" : "false") << ")";
}

// ---- Conv2d ----
Conv2dImpl::Conv2dImpl(const Conv2dOptions& o) : Module("Conv2d"), options(o) {
  options.kernel_size_ = Conv2dOptions::expand(options.kernel_size_);
  reset();
}

void Conv2dImpl::reset() {
  BRASA_CHECK(options.in_channels_ % options.groups_ == 0 && options.out_channels_ % options.groups_ == 0,
              "Conv2d: in_channels (", options.in_channels_, ") and out_channels (", options.out_channels_,
              ") must be divisible by groups (", options.groups_, ")");
  weight = register_parameter("weight", empty({options.out_channels_, options.in_channels_ / options.groups_,
                                               options.kernel_size_[0], options.kernel_size_[1]}));
  if (options.bias_) bias = register_parameter("bias", empty({options.out_channels_}));
  reset_parameters();
}

void Conv2dImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2dImpl::forward(const Tensor& x) {
  return conv2d(x, weight, bias, options.stride_, options.padding_, options.dilation_, options.groups_);
}

void Conv2dImpl::pretty_print(std::ostream& os) const {
  os << "Conv2d(" << options.in_channels_ << ", " << options.out_channels_ << ", kernel_size=["
     << options.kernel_size_[0] << ", " << options.kernel_size_[1] << "], stride=[" << options.stride_[0] << ", "
     << options.stride_[1] << "])";
}

// ---- pooling, activations, dropout, flatten ----
Tensor MaxPool2dImpl::forward(const Tensor& x) {
  return max_pool2d(x, options.kernel_size_, options.stride_, options.padding_);
}
void MaxPool2dImpl::pretty_print(std::ostream& os) const {
  os << "MaxPool2d(kernel_size=[" << options.kernel_size_[0] << ", " << options.kernel_size_.back() << "])";
}

Tensor ReLUImpl::forward(const Tensor& x) { return F::relu(x, inplace_); }
Tensor DropoutImpl::forward(const Tensor& x) { return F::dropout(x, p, is_training()); }
void DropoutImpl::pretty_print(std::ostream& os) const { os << "Dropout(p=" << p << ")"; }
Tensor FlattenImpl::forward(const Tensor& x) { return F::flatten(x, start_dim, end_dim); }

Tensor SequentialImpl::forward(const Tensor& x) {
  Tensor h = x;
  for (auto& step : steps_) h = step(h);
  return h;
}

}  // namespace brasa::nn
