#include <brasa/nn/conv3d.h>
#include <brasa/nn/init.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>

#include <cmath>
#include <ostream>

namespace brasa::nn {

static const Conv3dOptions& checked(const Conv3dOptions& o) {
  BRASA_CHECK(o.kernel_size_.size() == 3 && o.stride_.size() == 3 && o.padding_.size() == 3 &&
                  o.dilation_.size() == 3,
              "Conv3d: kernel_size, stride, padding and dilation take 1 or 3 values each");
  BRASA_CHECK(o.in_channels_ > 0 && o.out_channels_ > 0 && o.groups_ > 0 &&
                  o.in_channels_ % o.groups_ == 0 && o.out_channels_ % o.groups_ == 0,
              "Conv3d: in_channels (", o.in_channels_, ") and out_channels (", o.out_channels_,
              ") must be positive and divisible by groups (", o.groups_, ")");
  F::detail::check_conv_padding_mode("Conv3d", o.padding_mode_);
  return o;
}

Conv3dImpl::Conv3dImpl(const Conv3dOptions& o)
    : Cloneable("Conv3d"),
      options(checked(o)),
      weight(register_parameter(
          "weight", empty({o.out_channels_, o.in_channels_ / o.groups_, o.kernel_size_[0],
                           o.kernel_size_[1], o.kernel_size_[2]}))),
      bias(register_parameter("bias", o.bias_ ? empty({o.out_channels_}) : Tensor())) {
  reset_parameters();
}

void Conv3dImpl::reset_parameters() { init::default_layer_init_(weight, bias); }

Tensor Conv3dImpl::forward(const Tensor& x) {
  if (options.padding_mode_ != PaddingMode::Zeros) {
    Tensor padded =
        F::detail::pad_for_conv(x, options.padding_mode_, options.padding_, options.named_padding_,
                                options.kernel_size_, options.dilation_);
    return conv3d(padded, weight, bias, options.stride_, {0, 0, 0}, options.dilation_,
                  options.groups_);
  }
  if (options.named_padding_)
    return conv3d(x, weight, bias, options.stride_, *options.named_padding_, options.dilation_,
                  options.groups_);
  return conv3d(x, weight, bias, options.stride_, options.padding_, options.dilation_,
                options.groups_);
}

static const ConvTranspose3dOptions& checked(const ConvTranspose3dOptions& o) {
  BRASA_CHECK(o.kernel_size_.size() == 3 && o.stride_.size() == 3 && o.padding_.size() == 3 &&
                  o.dilation_.size() == 3 && o.output_padding_.size() == 3,
              "ConvTranspose3d: kernel_size, stride, padding, output_padding and dilation take 1 "
              "or 3 values each");
  BRASA_CHECK(o.in_channels_ > 0 && o.out_channels_ > 0 && o.groups_ > 0 &&
                  o.in_channels_ % o.groups_ == 0 && o.out_channels_ % o.groups_ == 0,
              "ConvTranspose3d: in_channels (", o.in_channels_, ") and out_channels (",
              o.out_channels_, ") must be positive and divisible by groups (", o.groups_, ")");
  BRASA_CHECK(!o.named_padding_,
              "ConvTranspose3d: padding kSame/kValid is only for convolutions; give numbers");
  BRASA_CHECK(o.padding_mode_ == PaddingMode::Zeros,
              "Only \"zeros\" padding mode is supported for ConvTranspose3d");
  return o;
}

ConvTranspose3dImpl::ConvTranspose3dImpl(const ConvTranspose3dOptions& o)
    : Cloneable("ConvTranspose3d"),
      options(checked(o)),
      weight(register_parameter(
          "weight", empty({o.in_channels_, o.out_channels_ / o.groups_, o.kernel_size_[0],
                           o.kernel_size_[1], o.kernel_size_[2]}))),
      bias(register_parameter("bias", o.bias_ ? empty({o.out_channels_}) : Tensor())) {
  reset_parameters();
}

// PyTorch initialises a transposed convolution as a convolution whose fan-in
// is weight.size(1) * kernel volume.
void ConvTranspose3dImpl::reset_parameters() { init::default_layer_init_(weight, bias); }

Tensor ConvTranspose3dImpl::forward(const Tensor& x) {
  return conv_transpose3d(x, weight, bias, options.stride_, options.padding_,
                          options.output_padding_, options.groups_, options.dilation_);
}

namespace functional {
Tensor conv_transpose3d(const Tensor& x, const Tensor& w, const ConvTranspose3dFuncOptions& o) {
  return brasa::conv_transpose3d(x, w, o.bias_, o.stride_, o.padding_, o.output_padding_, o.groups_,
                                 o.dilation_);
}
}  // namespace functional

}  // namespace brasa::nn

namespace brasa {

namespace {
std::vector<int64_t> three(const char* what, IntArrayRef v) {
  BRASA_CHECK(v.size() == 1 || v.size() == 3, "conv_transpose3d: expected ", what,
              " to have 1 or 3 values, got ", v);
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0], v[0]} : v.vec();
}

// x with stride - 1 zeros between neighbours along dim.
Tensor spread(const Tensor& x, int64_t dim, int64_t stride) {
  if (stride == 1 || x.size(dim) == 0) return x;
  std::vector<int64_t> gap = x.sizes().vec();
  gap.insert(gap.begin() + dim + 1, stride - 1);
  Tensor interleaved = cat({x.unsqueeze(dim + 1), zeros(gap, x.options())}, dim + 1);
  return interleaved.flatten(dim, dim + 1).narrow(dim, 0, (x.size(dim) - 1) * stride + 1);
}

// x padded by `before` and `after` zeros along dim (negative amounts crop).
Tensor pad_or_crop(const Tensor& x, int64_t dim, int64_t before, int64_t after) {
  Tensor y = x;
  if (before < 0) y = y.narrow(dim, -before, y.size(dim) + before);
  if (after < 0) y = y.narrow(dim, 0, y.size(dim) + after);
  std::vector<int64_t> amounts(2 * (y.dim() - dim), 0);
  const int64_t at = 2 * (y.dim() - 1 - dim);  // F::pad lists the last dim first
  amounts[at] = std::max<int64_t>(before, 0);
  amounts[at + 1] = std::max<int64_t>(after, 0);
  return nn::functional::pad(y, amounts, 0.0);
}
}  // namespace

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        IntArrayRef stride_arg, IntArrayRef padding_arg,
                        IntArrayRef output_padding_arg, int64_t groups, IntArrayRef dilation_arg) {
  BRASA_CHECK(input.defined() && weight.defined(),
              "conv_transpose3d: expected defined input and weight");
  BRASA_CHECK(input.dim() == 5 || input.dim() == 4,
              "conv_transpose3d: expected a 4-D or 5-D input [N, C, D, H, W], got shape ",
              input.sizes());
  BRASA_CHECK(weight.dim() == 5, "conv_transpose3d: expected a 5-D weight [in, out / groups, kd, ",
              "kh, kw], got shape ", weight.sizes());
  BRASA_CHECK(groups > 0 && weight.size(0) % groups == 0,
              "conv_transpose3d: groups must be positive and divide weight.size(0), got groups ",
              groups, " and weight ", weight.sizes());
  const auto stride = three("stride", stride_arg), padding = three("padding", padding_arg),
             output_padding = three("output_padding", output_padding_arg),
             dilation = three("dilation", dilation_arg);
  if (input.dim() == 4)
    return conv_transpose3d(input.unsqueeze(0), weight, bias, stride, padding, output_padding,
                            groups, dilation)
        .squeeze(0);
  BRASA_CHECK(input.size(1) == weight.size(0), "conv_transpose3d: input ", input.sizes(), " has ",
              input.size(1), " channels but weight ", weight.sizes(), " expects ", weight.size(0));
  for (int i = 0; i < 3; ++i) {
    BRASA_CHECK(stride[i] > 0 && dilation[i] > 0 && padding[i] >= 0 && output_padding[i] >= 0,
                "conv_transpose3d: stride and dilation must be positive, padding and "
                "output_padding non-negative");
    BRASA_CHECK(output_padding[i] < stride[i] || output_padding[i] < dilation[i],
                "conv_transpose3d: output padding must be smaller than either stride or "
                "dilation, but got output_padding ",
                IntArrayRef(output_padding), ", stride ", IntArrayRef(stride), " and dilation ",
                IntArrayRef(dilation));
  }
  Tensor x = input;
  for (int i = 0; i < 3; ++i) {
    const int64_t dim = 2 + i, reach = dilation[i] * (weight.size(2 + i) - 1);
    x = pad_or_crop(spread(x, dim, stride[i]), dim, reach - padding[i],
                    reach - padding[i] + output_padding[i]);
  }
  // Weight [in, out / g, k...] -> [out, in / g, k...] per group, flipped in space.
  const int64_t in = weight.size(0), out_per_group = weight.size(1);
  std::vector<int64_t> grouped{groups, in / groups, out_per_group};
  grouped.insert(grouped.end(), weight.sizes().begin() + 2, weight.sizes().end());
  Tensor w = weight.view(grouped).transpose(1, 2).flip({3, 4, 5});
  std::vector<int64_t> conv_shape{groups * out_per_group, in / groups};
  conv_shape.insert(conv_shape.end(), weight.sizes().begin() + 2, weight.sizes().end());
  return conv3d(x, w.reshape(conv_shape), bias, {1, 1, 1}, {0, 0, 0}, dilation, groups);
}

}  // namespace brasa
