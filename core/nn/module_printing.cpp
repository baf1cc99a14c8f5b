// How the built-in modules print, as libtorch 1.13 prints them
// ("torch::nn::Conv2d(1, 10, kernel_size=[5, 5], stride=[1, 1])"): options
// at their defaults are left out where libtorch leaves them out.
#include <brasa/nn/image_modules.h>
#include <brasa/nn/modules.h>
#include <brasa/nn/pooling_modules.h>
#include <brasa/nn/sequence_modules.h>

#include <ostream>

namespace brasa::nn {
namespace {

const char* boolean(bool b) { return b ? "true" : "false"; }

// One value as "v", several as "[a, b]", as libtorch prints an ExpandingArray.
void print_sizes(std::ostream& os, const std::vector<int64_t>& v) {
  if (v.size() == 1) {
    os << v[0];
    return;
  }
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
}

bool all_equal(const std::vector<int64_t>& v, int64_t value) {
  for (int64_t x : v)
    if (x != value) return false;
  return true;
}

const char* padding_mode_name(PaddingMode m) {
  switch (m) {
    case PaddingMode::Zeros:
      return "kZeros";
    case PaddingMode::Constant:
      return "kConstant";
    case PaddingMode::Reflect:
      return "kReflect";
    case PaddingMode::Replicate:
      return "kReplicate";
    case PaddingMode::Circular:
      return "kCircular";
    case PaddingMode::Border:
      return "kBorder";
    case PaddingMode::Reflection:
      return "kReflection";
  }
  return "?";
}

struct ConvPrint {
  const char* name;
  int64_t in, out;
  std::vector<int64_t> kernel, stride, padding, dilation, output_padding;
  std::optional<ConvPadding> named_padding;
  int64_t groups;
  bool bias;
  PaddingMode padding_mode;
};

void print_conv(std::ostream& os, const ConvPrint& c) {
  os << "torch::nn::" << c.name << "(" << c.in << ", " << c.out << ", kernel_size=";
  print_sizes(os, c.kernel);
  print_sizes(os << ", stride=", c.stride);
  if (c.named_padding)
    os << ", padding=" << (*c.named_padding == ConvPadding::Same ? "'same'" : "'valid'");
  else if (!all_equal(c.padding, 0))
    print_sizes(os << ", padding=", c.padding);
  if (!all_equal(c.dilation, 1)) print_sizes(os << ", dilation=", c.dilation);
  if (!c.output_padding.empty() && !all_equal(c.output_padding, 0))
    print_sizes(os << ", output_padding=", c.output_padding);
  if (c.groups != 1) os << ", groups=" << c.groups;
  if (!c.bias) os << ", bias=false";
  if (c.padding_mode != PaddingMode::Zeros)
    os << ", padding_mode=" << padding_mode_name(c.padding_mode);
  os << ")";
}

const char* interpolate_mode_name(InterpolateMode m) {
  switch (m) {
    case InterpolateMode::Nearest:
      return "kNearest";
    case InterpolateMode::Linear:
      return "kLinear";
    case InterpolateMode::Bilinear:
      return "kBilinear";
    case InterpolateMode::Bicubic:
      return "kBicubic";
    case InterpolateMode::Trilinear:
      return "kTrilinear";
    case InterpolateMode::Area:
      return "kArea";
    case InterpolateMode::NearestExact:
      return "kNearestExact";
  }
  return "?";
}

}  // namespace

void ActivationImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::" << name() << "(" << args_ << ")";
}

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Linear(in_features=" << options.in_features_
     << ", out_features=" << options.out_features_ << ", bias=" << boolean(options.bias_) << ")";
}

void Conv1dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  print_conv(os, {"Conv1d",
                  o.in_channels_,
                  o.out_channels_,
                  {o.kernel_size_},
                  {o.stride_},
                  {o.padding_},
                  {o.dilation_},
                  {},
                  o.named_padding_,
                  o.groups_,
                  o.bias_,
                  o.padding_mode_});
}

void Conv2dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  print_conv(os, {"Conv2d",
                  o.in_channels_,
                  o.out_channels_,
                  o.kernel_size_,
                  o.stride_,
                  o.padding_,
                  o.dilation_,
                  {},
                  o.named_padding_,
                  o.groups_,
                  o.bias_,
                  o.padding_mode_});
}

void Conv3dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  print_conv(os, {"Conv3d",
                  o.in_channels_,
                  o.out_channels_,
                  o.kernel_size_,
                  o.stride_,
                  o.padding_,
                  o.dilation_,
                  {},
                  o.named_padding_,
                  o.groups_,
                  o.bias_,
                  o.padding_mode_});
}

void ConvTranspose1dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  print_conv(os, {"ConvTranspose1d",
                  o.in_channels_,
                  o.out_channels_,
                  {o.kernel_size_},
                  {o.stride_},
                  {o.padding_},
                  {o.dilation_},
                  {o.output_padding_},
                  std::nullopt,
                  o.groups_,
                  o.bias_,
                  PaddingMode::Zeros});
}

void ConvTranspose2dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  print_conv(os, {"ConvTranspose2d", o.in_channels_, o.out_channels_, o.kernel_size_, o.stride_,
                  o.padding_, o.dilation_, o.output_padding_, std::nullopt, o.groups_, o.bias_,
                  o.padding_mode_});
}

void ConvTranspose3dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  print_conv(os, {"ConvTranspose3d", o.in_channels_, o.out_channels_, o.kernel_size_, o.stride_,
                  o.padding_, o.dilation_, o.output_padding_, std::nullopt, o.groups_, o.bias_,
                  o.padding_mode_});
}

void ReLUImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::ReLU(" << (inplace_ ? "inplace=true" : "") << ")";
}

void DropoutImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Dropout(p=" << p << ", inplace=" << boolean(inplace) << ")";
}

void Dropout2dImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Dropout2d(p=" << p << ", inplace=" << boolean(inplace) << ")";
}

void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Flatten(start_dim=" << start_dim << ", end_dim=" << end_dim << ")";
}

void BatchNormImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::" << name() << "(" << options.num_features_ << ", eps=" << options.eps_
     << ", momentum=" << options.momentum_ << ", affine=" << boolean(options.affine_)
     << ", track_running_stats=" << boolean(options.track_running_stats_) << ")";
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::LayerNorm(" << IntArrayRef(normalized_shape) << ", eps=" << eps
     << ", elementwise_affine=" << boolean(weight.defined()) << ")";
}

void GroupNormImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::GroupNorm(" << num_groups << ", " << num_channels << ", eps=" << eps
     << ", affine=" << boolean(weight.defined()) << ")";
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Embedding(num_embeddings=" << weight.size(0)
     << ", embedding_dim=" << weight.size(1);
  if (padding_idx) os << ", padding_idx=" << *padding_idx;
  if (max_norm) os << ", max_norm=" << *max_norm;
  if (norm_type != 2.0) os << ", norm_type=" << norm_type;
  if (scale_grad_by_freq) os << ", scale_grad_by_freq=true";
  os << ")";
}

void EmbeddingBagImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  os << "torch::nn::EmbeddingBag(num_embeddings=" << o.num_embeddings_
     << ", embedding_dim=" << o.embedding_dim_;
  if (o.max_norm_) os << ", max_norm=" << *o.max_norm_;
  if (o.norm_type_ != 2.0) os << ", norm_type=" << o.norm_type_;
  if (o.scale_grad_by_freq_) os << ", scale_grad_by_freq=true";
  if (o.include_last_offset_) os << ", include_last_offset=true";
  if (o.padding_idx_) os << ", padding_idx=" << *o.padding_idx_;
  os << ")";
}

void UnflattenImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Unflatten(dim=" << dim << ", unflattened_size={";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  os << "})";
}

void PReLUImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::PReLU(num_parameters=" << weight.numel() << ")";
}

void BilinearImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Bilinear(in1_features=" << weight.size(1) << ", in2_features=" << weight.size(2)
     << ", out_features=" << weight.size(0) << ", bias=" << boolean(bias.defined()) << ")";
}

void RNNBaseImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  os << "torch::nn::" << name() << "(input_size=" << o.input_size_
     << ", hidden_size=" << o.hidden_size_ << ", num_layers=" << o.num_layers_
     << ", bias=" << boolean(o.bias_) << ", batch_first=" << boolean(o.batch_first_)
     << ", dropout=" << o.dropout_ << ", bidirectional=" << boolean(o.bidirectional_);
  if (o.proj_size_ > 0) os << ", proj_size=" << o.proj_size_;
  os << ")";
}

void UpsampleImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Upsample(";
  if (!options.scale_factor_) {
    os << "size=" << IntArrayRef(options.size_.value_or(std::vector<int64_t>{}));
  } else {
    os << "scale_factor=[";
    for (size_t i = 0; i < options.scale_factor_->size(); ++i)
      os << (i ? ", " : "") << (*options.scale_factor_)[i];
    os << "]";
  }
  os << ", mode=" << interpolate_mode_name(options.mode_) << ")";
}

namespace detail {

template <size_t D>
void print_options(std::ostream& os, const functional::MaxPoolFuncOptions<D>& o) {
  print_sizes(os << "kernel_size=", o.kernel_size_);
  print_sizes(os << ", stride=", o.stride_);
  print_sizes(os << ", padding=", o.padding_);
  print_sizes(os << ", dilation=", o.dilation_);
  os << ", ceil_mode=" << (o.ceil_mode_ ? "true" : "false");
}
template <size_t D>
void print_options(std::ostream& os, const functional::AvgPoolFuncOptions<D>& o) {
  print_sizes(os << "kernel_size=", o.kernel_size_);
  print_sizes(os << ", stride=", o.stride_);
  print_sizes(os << ", padding=", o.padding_);
}
template <size_t D>
void print_options(std::ostream& os, const functional::AdaptivePoolFuncOptions<D>& o) {
  print_sizes(os << "output_size=", o.output_size_);
}
// libtorch prints FractionalMaxPool2d/3d with empty parentheses.
template <size_t D>
void print_options(std::ostream&, const functional::FractionalMaxPoolFuncOptions<D>&) {}
template void print_options(std::ostream&, const functional::FractionalMaxPoolFuncOptions<2>&);
template void print_options(std::ostream&, const functional::FractionalMaxPoolFuncOptions<3>&);
template void print_options(std::ostream&, const functional::MaxPoolFuncOptions<1>&);
template void print_options(std::ostream&, const functional::MaxPoolFuncOptions<2>&);
template void print_options(std::ostream&, const functional::MaxPoolFuncOptions<3>&);
template void print_options(std::ostream&, const functional::AvgPoolFuncOptions<1>&);
template void print_options(std::ostream&, const functional::AvgPoolFuncOptions<2>&);
template void print_options(std::ostream&, const functional::AvgPoolFuncOptions<3>&);
template void print_options(std::ostream&, const functional::AdaptivePoolFuncOptions<1>&);
template void print_options(std::ostream&, const functional::AdaptivePoolFuncOptions<2>&);
template void print_options(std::ostream&, const functional::AdaptivePoolFuncOptions<3>&);
}  // namespace detail

}  // namespace brasa::nn
