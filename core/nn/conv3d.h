#pragma once
// nn::Conv3d over [N, C, D, H, W] (weight [out, in / groups, kd, kh, kw]),
// and its adjoint ConvTranspose3d (weight [in, out / groups, kd, kh, kw]).
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>
#include <brasa/ops/conv.h>

#include <optional>
#include <vector>

namespace brasa::nn {

struct Conv3dOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& in_channels() const noexcept { return in_channels_; }
  const auto& out_channels() const noexcept { return out_channels_; }
  const auto& kernel_size() const noexcept { return kernel_size_; }
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& named_padding() const noexcept { return named_padding_; }
  const auto& groups() const noexcept { return groups_; }
  const auto& bias() const noexcept { return bias_; }
  const auto& padding_mode() const noexcept { return padding_mode_; }
  Conv3dOptions(int64_t in, int64_t out, int64_t kernel)
      : Conv3dOptions(in, out, std::vector<int64_t>{kernel}) {}
  Conv3dOptions(int64_t in, int64_t out, std::vector<int64_t> kernel)
      : in_channels_(in), out_channels_(out), kernel_size_(expand(std::move(kernel))) {}
  Conv3dOptions& in_channels(int64_t v) {
    in_channels_ = v;
    return *this;
  }
  Conv3dOptions& out_channels(int64_t v) {
    out_channels_ = v;
    return *this;
  }
  Conv3dOptions& kernel_size(std::vector<int64_t> v) {
    kernel_size_ = expand(std::move(v));
    return *this;
  }
  Conv3dOptions& kernel_size(int64_t k) {
    kernel_size_ = {k, k, k};
    return *this;
  }
  Conv3dOptions& stride(int64_t s) {
    stride_ = {s, s, s};
    return *this;
  }
  Conv3dOptions& stride(std::vector<int64_t> s) {
    stride_ = expand(std::move(s));
    return *this;
  }
  Conv3dOptions& padding(int64_t p) {
    padding_ = {p, p, p};
    return *this;
  }
  Conv3dOptions& padding(std::vector<int64_t> p) {
    padding_ = expand(std::move(p));
    return *this;
  }
  // torch::kSame (output as large as the input; stride 1) or torch::kValid.
  Conv3dOptions& padding(ConvPadding p) {
    named_padding_ = p;
    return *this;
  }
  Conv3dOptions& dilation(int64_t d) {
    dilation_ = {d, d, d};
    return *this;
  }
  Conv3dOptions& dilation(std::vector<int64_t> d) {
    dilation_ = expand(std::move(d));
    return *this;
  }
  Conv3dOptions& groups(int64_t g) {
    groups_ = g;
    return *this;
  }
  // torch::kZeros (default), kReflect, kReplicate or kCircular.
  Conv3dOptions& padding_mode(PaddingMode m) {
    padding_mode_ = m;
    return *this;
  }
  Conv3dOptions& bias(bool b) {
    bias_ = b;
    return *this;
  }
  static std::vector<int64_t> expand(std::vector<int64_t> v) {
    return v.size() == 1 ? std::vector<int64_t>{v[0], v[0], v[0]} : v;
  }
  int64_t in_channels_, out_channels_;
  std::vector<int64_t> kernel_size_, stride_{1, 1, 1}, padding_{0, 0, 0}, dilation_{1, 1, 1};
  std::optional<ConvPadding> named_padding_;
  int64_t groups_ = 1;
  bool bias_ = true;
  PaddingMode padding_mode_ = PaddingMode::Zeros;
};

class Conv3dImpl : public Cloneable<Conv3dImpl> {
 public:
  Conv3dImpl(int64_t in, int64_t out, int64_t kernel)
      : Conv3dImpl(Conv3dOptions(in, out, kernel)) {}
  explicit Conv3dImpl(const Conv3dOptions& o);
  Conv3dImpl(const Conv3dImpl& o) : Conv3dImpl(o.options) {}
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  Conv3dOptions options;
  Tensor& weight;  // registered slots (see LinearImpl)
  Tensor& bias;
};
BRASA_MODULE(Conv3d);

struct ConvTranspose3dOptions : Conv3dOptions {
  ConvTranspose3dOptions(int64_t in, int64_t out, int64_t kernel)
      : Conv3dOptions(in, out, kernel) {}
  ConvTranspose3dOptions(int64_t in, int64_t out, std::vector<int64_t> kernel)
      : Conv3dOptions(in, out, std::move(kernel)) {}
  ConvTranspose3dOptions& output_padding(int64_t p) {
    output_padding_ = {p, p, p};
    return *this;
  }
  ConvTranspose3dOptions& output_padding(std::vector<int64_t> p) {
    output_padding_ = expand(std::move(p));
    return *this;
  }
  // The inherited setters, returning this type so that calls chain.
  ConvTranspose3dOptions& stride(int64_t s) {
    Conv3dOptions::stride(s);
    return *this;
  }
  ConvTranspose3dOptions& stride(std::vector<int64_t> s) {
    Conv3dOptions::stride(std::move(s));
    return *this;
  }
  ConvTranspose3dOptions& padding(int64_t p) {
    Conv3dOptions::padding(p);
    return *this;
  }
  ConvTranspose3dOptions& padding(std::vector<int64_t> p) {
    Conv3dOptions::padding(std::move(p));
    return *this;
  }
  ConvTranspose3dOptions& dilation(int64_t d) {
    Conv3dOptions::dilation(d);
    return *this;
  }
  ConvTranspose3dOptions& dilation(std::vector<int64_t> d) {
    Conv3dOptions::dilation(std::move(d));
    return *this;
  }
  ConvTranspose3dOptions& groups(int64_t g) {
    Conv3dOptions::groups(g);
    return *this;
  }
  ConvTranspose3dOptions& bias(bool b) {
    Conv3dOptions::bias(b);
    return *this;
  }
  ConvTranspose3dOptions& padding_mode(PaddingMode m) {
    Conv3dOptions::padding_mode(m);
    return *this;
  }
  // Getters, as libtorch's options have (the setters above hide Conv*Options').
  const auto& stride() const noexcept { return stride_; }
  const auto& padding() const noexcept { return padding_; }
  const auto& output_padding() const noexcept { return output_padding_; }
  const auto& dilation() const noexcept { return dilation_; }
  const auto& groups() const noexcept { return groups_; }
  const auto& bias() const noexcept { return bias_; }
  const auto& padding_mode() const noexcept { return padding_mode_; }
  std::vector<int64_t> output_padding_{0, 0, 0};
};
class ConvTranspose3dImpl : public Cloneable<ConvTranspose3dImpl> {
 public:
  ConvTranspose3dImpl(int64_t in, int64_t out, int64_t kernel)
      : ConvTranspose3dImpl(ConvTranspose3dOptions(in, out, kernel)) {}
  explicit ConvTranspose3dImpl(const ConvTranspose3dOptions& o);
  ConvTranspose3dImpl(const ConvTranspose3dImpl& o) : ConvTranspose3dImpl(o.options) {}
  void reset_parameters();
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  ConvTranspose3dOptions options;
  Tensor& weight;  // registered slots (see LinearImpl)
  Tensor& bias;
};
BRASA_MODULE(ConvTranspose3d);

namespace functional {
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;
Tensor conv_transpose3d(const Tensor& x, const Tensor& w, const ConvTranspose3dFuncOptions& o = {});
}  // namespace functional

}  // namespace brasa::nn

namespace brasa {
// The adjoint of conv3d: input [N, C, D, H, W], weight [in, out / groups, kd,
// kh, kw]; each output size (in - 1) * stride - 2 * padding + dilation * (k -
// 1) + output_padding + 1. Computed as conv3d over the input spread out by
// the stride, with the flipped kernel.
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntArrayRef stride = {1, 1, 1}, IntArrayRef padding = {0, 0, 0},
                        IntArrayRef output_padding = {0, 0, 0}, int64_t groups = 1,
                        IntArrayRef dilation = {1, 1, 1});
}  // namespace brasa
