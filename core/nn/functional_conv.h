#pragma once
// nn::functional convolutions and pooling with libtorch's option structs:
//   F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).padding(1));
//   F::max_pool2d(x, F::MaxPool2dFuncOptions(2).stride(2));
// Thin wrappers over the ops in <brasa/ops/conv.h> and <brasa/ops/pooling.h>.
#include <brasa/nn/functional.h>
#include <brasa/ops/conv.h>
#include <brasa/ops/pooling.h>

#include <optional>
#include <tuple>
#include <vector>

namespace brasa::nn::functional {

// A D-value size argument given as one value (repeated) or D values
// (libtorch's ExpandingArray).
template <size_t D>
struct Expanding {
  Expanding(int64_t v) : values(D, v) {}
  Expanding(std::initializer_list<int64_t> v) : Expanding(std::vector<int64_t>(v)) {}
  Expanding(std::vector<int64_t> v) : values(std::move(v)) {
    if (values.size() == 1) values = std::vector<int64_t>(D, values.front());
    BRASA_CHECK(values.size() == D, "expected 1 or ", D, " values, got ", values.size());
  }
  std::vector<int64_t> values;
};

template <size_t D>
struct ConvFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& bias() const noexcept { return bias_; }
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& named_padding() const noexcept { return named_padding_; }
  const auto& groups() const noexcept { return groups_; }
  ConvFuncOptions& bias(Tensor b) {
    bias_ = std::move(b);
    return *this;
  }
  ConvFuncOptions& stride(Expanding<D> s) {
    stride_ = std::move(s.values);
    return *this;
  }
  ConvFuncOptions& padding(Expanding<D> p) {
    padding_ = std::move(p.values);
    named_padding_.reset();
    return *this;
  }
  // torch::kSame / torch::kValid
  ConvFuncOptions& padding(ConvPadding p) {
    named_padding_ = p;
    return *this;
  }
  ConvFuncOptions& dilation(Expanding<D> d) {
    dilation_ = std::move(d.values);
    return *this;
  }
  ConvFuncOptions& groups(int64_t g) {
    groups_ = g;
    return *this;
  }
  Tensor bias_;
  std::vector<int64_t> stride_ = std::vector<int64_t>(D, 1), padding_ = std::vector<int64_t>(D, 0),
                       dilation_ = std::vector<int64_t>(D, 1);
  std::optional<ConvPadding> named_padding_;
  int64_t groups_ = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

inline Tensor conv1d(const Tensor& x, const Tensor& w, const Conv1dFuncOptions& o = {}) {
  return o.named_padding_
             ? brasa::conv1d(x, w, o.bias_, o.stride_, *o.named_padding_, o.dilation_, o.groups_)
             : brasa::conv1d(x, w, o.bias_, o.stride_, o.padding_, o.dilation_, o.groups_);
}
inline Tensor conv2d(const Tensor& x, const Tensor& w, const Conv2dFuncOptions& o = {}) {
  return o.named_padding_
             ? brasa::conv2d(x, w, o.bias_, o.stride_, *o.named_padding_, o.dilation_, o.groups_)
             : brasa::conv2d(x, w, o.bias_, o.stride_, o.padding_, o.dilation_, o.groups_);
}
inline Tensor conv3d(const Tensor& x, const Tensor& w, const Conv3dFuncOptions& o = {}) {
  return o.named_padding_
             ? brasa::conv3d(x, w, o.bias_, o.stride_, *o.named_padding_, o.dilation_, o.groups_)
             : brasa::conv3d(x, w, o.bias_, o.stride_, o.padding_, o.dilation_, o.groups_);
}

template <size_t D>
struct ConvTransposeFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& bias() const noexcept { return bias_; }
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& output_padding() const noexcept { return output_padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& groups() const noexcept { return groups_; }
  ConvTransposeFuncOptions& bias(Tensor b) {
    bias_ = std::move(b);
    return *this;
  }
  ConvTransposeFuncOptions& stride(Expanding<D> s) {
    stride_ = std::move(s.values);
    return *this;
  }
  ConvTransposeFuncOptions& padding(Expanding<D> p) {
    padding_ = std::move(p.values);
    return *this;
  }
  ConvTransposeFuncOptions& output_padding(Expanding<D> p) {
    output_padding_ = std::move(p.values);
    return *this;
  }
  ConvTransposeFuncOptions& groups(int64_t g) {
    groups_ = g;
    return *this;
  }
  ConvTransposeFuncOptions& dilation(Expanding<D> d) {
    dilation_ = std::move(d.values);
    return *this;
  }
  Tensor bias_;
  std::vector<int64_t> stride_ = std::vector<int64_t>(D, 1), padding_ = std::vector<int64_t>(D, 0),
                       output_padding_ = std::vector<int64_t>(D, 0),
                       dilation_ = std::vector<int64_t>(D, 1);
  int64_t groups_ = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;

inline Tensor conv_transpose1d(const Tensor& x, const Tensor& w,
                               const ConvTranspose1dFuncOptions& o = {}) {
  return brasa::conv_transpose1d(x, w, o.bias_, o.stride_, o.padding_, o.output_padding_, o.groups_,
                                 o.dilation_);
}
inline Tensor conv_transpose2d(const Tensor& x, const Tensor& w,
                               const ConvTranspose2dFuncOptions& o = {}) {
  return brasa::conv_transpose2d(x, w, o.bias_, o.stride_, o.padding_, o.output_padding_, o.groups_,
                                 o.dilation_);
}

// stride defaults to the kernel size, as in PyTorch.
template <size_t D>
struct MaxPoolFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& kernel_size() const noexcept { return kernel_size_; }
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& ceil_mode() const noexcept { return ceil_mode_; }
  // Implicit from one size, a braced list or a vector of D sizes.
  MaxPoolFuncOptions(int64_t kernel) : MaxPoolFuncOptions(Expanding<D>(kernel)) {}  // NOLINT
  MaxPoolFuncOptions(std::initializer_list<int64_t> kernel)                         // NOLINT
      : MaxPoolFuncOptions(Expanding<D>(kernel)) {}
  MaxPoolFuncOptions(std::vector<int64_t> kernel)
      : MaxPoolFuncOptions(Expanding<D>(std::move(kernel))) {}  // NOLINT
  MaxPoolFuncOptions(Expanding<D> kernel)
      : kernel_size_(kernel.values), stride_(kernel.values) {}  // NOLINT
  MaxPoolFuncOptions& kernel_size(Expanding<D> k) {
    kernel_size_ = std::move(k.values);
    return *this;
  }
  MaxPoolFuncOptions& stride(Expanding<D> s) {
    stride_ = std::move(s.values);
    return *this;
  }
  MaxPoolFuncOptions& padding(Expanding<D> p) {
    padding_ = std::move(p.values);
    return *this;
  }
  MaxPoolFuncOptions& dilation(Expanding<D> d) {
    dilation_ = std::move(d.values);
    return *this;
  }
  MaxPoolFuncOptions& ceil_mode(bool c) {
    ceil_mode_ = c;
    return *this;
  }
  std::vector<int64_t> kernel_size_, stride_, padding_ = std::vector<int64_t>(D, 0),
                                              dilation_ = std::vector<int64_t>(D, 1);
  bool ceil_mode_ = false;
};
using MaxPool1dFuncOptions = MaxPoolFuncOptions<1>;
using MaxPool2dFuncOptions = MaxPoolFuncOptions<2>;

template <size_t D>
struct AvgPoolFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& kernel_size() const noexcept { return kernel_size_; }
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& ceil_mode() const noexcept { return ceil_mode_; }
  const auto& count_include_pad() const noexcept { return count_include_pad_; }
  const auto& divisor_override() const noexcept { return divisor_override_; }
  // Implicit from one size, a braced list or a vector of D sizes.
  AvgPoolFuncOptions(int64_t kernel) : AvgPoolFuncOptions(Expanding<D>(kernel)) {}  // NOLINT
  AvgPoolFuncOptions(std::initializer_list<int64_t> kernel)                         // NOLINT
      : AvgPoolFuncOptions(Expanding<D>(kernel)) {}
  AvgPoolFuncOptions(std::vector<int64_t> kernel)
      : AvgPoolFuncOptions(Expanding<D>(std::move(kernel))) {}  // NOLINT
  AvgPoolFuncOptions(Expanding<D> kernel)
      : kernel_size_(kernel.values), stride_(kernel.values) {}  // NOLINT
  AvgPoolFuncOptions& kernel_size(Expanding<D> k) {
    kernel_size_ = std::move(k.values);
    return *this;
  }
  AvgPoolFuncOptions& stride(Expanding<D> s) {
    stride_ = std::move(s.values);
    return *this;
  }
  AvgPoolFuncOptions& padding(Expanding<D> p) {
    padding_ = std::move(p.values);
    return *this;
  }
  AvgPoolFuncOptions& ceil_mode(bool c) {
    ceil_mode_ = c;
    return *this;
  }
  AvgPoolFuncOptions& count_include_pad(bool c) {
    count_include_pad_ = c;
    return *this;
  }
  // Divide each window's sum by this instead of its size.
  AvgPoolFuncOptions& divisor_override(std::optional<int64_t> d) {
    divisor_override_ = d;
    return *this;
  }
  std::vector<int64_t> kernel_size_, stride_, padding_ = std::vector<int64_t>(D, 0);
  bool ceil_mode_ = false, count_include_pad_ = true;
  std::optional<int64_t> divisor_override_;
};
using AvgPool1dFuncOptions = AvgPoolFuncOptions<1>;
using AvgPool2dFuncOptions = AvgPoolFuncOptions<2>;
using AvgPool3dFuncOptions = AvgPoolFuncOptions<3>;
using MaxPool3dFuncOptions = MaxPoolFuncOptions<3>;

// The output size of adaptive pooling (one value repeated, or D values).
template <size_t D>
struct AdaptivePoolFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& output_size() const noexcept { return output_size_; }
  // Implicit from one size, a braced list or a vector: F::adaptive_avg_pool2d(x, {7, 7}).
  AdaptivePoolFuncOptions(int64_t size) : output_size_(Expanding<D>(size).values) {}  // NOLINT
  AdaptivePoolFuncOptions(std::initializer_list<int64_t> size)                        // NOLINT
      : output_size_(Expanding<D>(size).values) {}
  AdaptivePoolFuncOptions(std::vector<int64_t> size)  // NOLINT
      : output_size_(Expanding<D>(std::move(size)).values) {}
  AdaptivePoolFuncOptions(Expanding<D> size) : output_size_(std::move(size.values)) {}  // NOLINT
  AdaptivePoolFuncOptions& output_size(Expanding<D> size) {
    output_size_ = std::move(size.values);
    return *this;
  }
  std::vector<int64_t> output_size_;
};
using AdaptiveAvgPool1dFuncOptions = AdaptivePoolFuncOptions<1>;
using AdaptiveAvgPool2dFuncOptions = AdaptivePoolFuncOptions<2>;
using AdaptiveAvgPool3dFuncOptions = AdaptivePoolFuncOptions<3>;
using AdaptiveMaxPool1dFuncOptions = AdaptivePoolFuncOptions<1>;
using AdaptiveMaxPool2dFuncOptions = AdaptivePoolFuncOptions<2>;
using AdaptiveMaxPool3dFuncOptions = AdaptivePoolFuncOptions<3>;

inline Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& o) {
  return brasa::max_pool2d(x, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}
inline std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x,
                                                          const MaxPool2dFuncOptions& o) {
  return brasa::max_pool2d_with_indices(x, o.kernel_size_, o.stride_, o.padding_, o.dilation_,
                                        o.ceil_mode_);
}
Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o);

namespace detail {
// The input padded as a convolution's padding_mode (kReflect, kReplicate,
// kCircular) says, for the convolution to then run unpadded: `padding` per
// spatial dim, or the named padding (kSame: dilation * (k - 1) in total, the
// odd element at the end; kValid: none).
Tensor pad_for_conv(const Tensor& x, PaddingMode mode, IntArrayRef padding,
                    std::optional<ConvPadding> named, IntArrayRef kernel, IntArrayRef dilation);
// Checks a convolution module's padding_mode (kConstant is F::pad's, not a convolution's).
void check_conv_padding_mode(const char* module, PaddingMode mode);
}  // namespace detail

// The 1-d forms pool over the last dim of [N, C, L] (or [C, L]) through the 2-d kernels.
Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& o);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const MaxPool1dFuncOptions& o);
Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& o);
// 3-d pooling over the last three dims of [N, C, D, H, W] (or [C, D, H, W]).
Tensor max_pool3d(const Tensor& x, const MaxPool3dFuncOptions& o);
Tensor avg_pool3d(const Tensor& x, const AvgPool3dFuncOptions& o);

// Adaptive pooling: output_size windows per spatial dim, window i spanning
// [floor(i * in / out), ceil((i + 1) * in / out)).
Tensor adaptive_avg_pool1d(const Tensor& x, const AdaptiveAvgPool1dFuncOptions& o);
Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveAvgPool2dFuncOptions& o);
Tensor adaptive_avg_pool3d(const Tensor& x, const AdaptiveAvgPool3dFuncOptions& o);
Tensor adaptive_max_pool1d(const Tensor& x, const AdaptiveMaxPool1dFuncOptions& o);
Tensor adaptive_max_pool2d(const Tensor& x, const AdaptiveMaxPool2dFuncOptions& o);
Tensor adaptive_max_pool3d(const Tensor& x, const AdaptiveMaxPool3dFuncOptions& o);
// Fractional max pooling (Graham's): windows of kernel_size at pseudo-random
// but increasing offsets, drawn once per plane from _random_samples (uniform
// in [0, 1), [N, C, D]; drawn from the default generator when undefined),
// giving output_size outputs (or input size * output_ratio) per dim.
template <size_t D>
struct FractionalMaxPoolFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& kernel_size() const noexcept { return kernel_size_; }
  const auto& output_size() const noexcept { return output_size_; }
  const auto& output_ratio() const noexcept { return output_ratio_; }
  const auto& _random_samples() const noexcept { return _random_samples_; }
  FractionalMaxPoolFuncOptions(Expanding<D> kernel)
      : kernel_size_(std::move(kernel.values)) {}  // NOLINT
  FractionalMaxPoolFuncOptions(int64_t kernel)     // NOLINT
      : FractionalMaxPoolFuncOptions(Expanding<D>(kernel)) {}
  FractionalMaxPoolFuncOptions(std::initializer_list<int64_t> kernel)  // NOLINT
      : FractionalMaxPoolFuncOptions(Expanding<D>(kernel)) {}
  FractionalMaxPoolFuncOptions& kernel_size(Expanding<D> k) {
    kernel_size_ = std::move(k.values);
    return *this;
  }
  FractionalMaxPoolFuncOptions& output_size(std::optional<Expanding<D>> s) {
    output_size_.reset();
    if (s) output_size_ = s->values;
    return *this;
  }
  FractionalMaxPoolFuncOptions& output_ratio(std::optional<std::vector<double>> r) {
    output_ratio_.reset();
    if (r) output_ratio_ = r->size() == 1 ? std::vector<double>(D, r->front()) : *r;
    return *this;
  }
  FractionalMaxPoolFuncOptions& output_ratio(double r) {
    return output_ratio(std::vector<double>(D, r));
  }
  FractionalMaxPoolFuncOptions& _random_samples(Tensor t) {
    _random_samples_ = std::move(t);
    return *this;
  }
  std::vector<int64_t> kernel_size_;
  std::optional<std::vector<int64_t>> output_size_;
  std::optional<std::vector<double>> output_ratio_;
  Tensor _random_samples_;
};
using FractionalMaxPool2dFuncOptions = FractionalMaxPoolFuncOptions<2>;
using FractionalMaxPool3dFuncOptions = FractionalMaxPoolFuncOptions<3>;
Tensor fractional_max_pool2d(const Tensor& x, const FractionalMaxPool2dFuncOptions& o);
Tensor fractional_max_pool3d(const Tensor& x, const FractionalMaxPool3dFuncOptions& o);
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& x, const FractionalMaxPool2dFuncOptions& o);
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& x, const FractionalMaxPool3dFuncOptions& o);

// (values, positions): each output's input element as its index in the
// channel's flattened spatial dims (what MaxUnpool takes); the gradient goes
// to that element only.
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, const MaxPool3dFuncOptions& o);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x,
                                                            const AdaptiveMaxPool1dFuncOptions& o);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x,
                                                            const AdaptiveMaxPool2dFuncOptions& o);
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x,
                                                            const AdaptiveMaxPool3dFuncOptions& o);

}  // namespace brasa::nn::functional
