#include <brasa/nn/conv3d.h>
#include <brasa/nn/init.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/conv.h>
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
  // Depth tap kd of the kernel is a 2-d transposed convolution of every input
  // depth slice id, landing at output depth id * stride - padding + kd *
  // dilation. All taps run as one 2-d transposed convolution with KD times the
  // output channels (the weight's own order [in, out / g, KD] gives them as
  // [C_out, KD]), so no zeros are spread in and the work is the op's own;
  // the taps are then added onto their output depths in place (an index_add
  // copying the whole output per tap ran 1.16x libtorch's time).
  const int64_t n = input.size(0), c = input.size(1), depth = input.size(2);
  const int64_t kd_taps = weight.size(2), out_per_group = weight.size(1);
  const int64_t out_depth = (depth - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kd_taps - 1) +
                            output_padding[0] + 1;
  BRASA_CHECK(out_depth > 0, "conv_transpose3d: output depth ", out_depth, " is not positive");
  if (bias.defined())
    BRASA_CHECK(bias.dim() == 1 && bias.size(0) == groups * out_per_group,
                "conv_transpose3d: expected bias of shape [", groups * out_per_group, "], got ",
                bias.sizes());
  const int64_t in = weight.size(0), kh = weight.size(3), kw = weight.size(4);
  Tensor w2 = weight.reshape({in, out_per_group * kd_taps, kh, kw});
  Tensor slices = input.transpose(1, 2).reshape({n * depth, c, input.size(3), input.size(4)});
  Tensor planes =
      conv_transpose2d(slices, w2, {}, {stride[1], stride[2]}, {padding[1], padding[2]},
                       {output_padding[1], output_padding[2]}, groups, {dilation[1], dilation[2]});
  const int64_t oh = planes.size(2), ow = planes.size(3), out_channels = groups * out_per_group;
  Tensor y = detail::depth_taps_sum(
      planes.view({n, depth, out_channels, kd_taps, oh, ow}),
      detail::DepthTaps{out_depth, depth, kd_taps, stride[0], padding[0], dilation[0]},
      {n, out_channels, out_depth, oh, ow});
  return bias.defined() ? y + bias.view({1, -1, 1, 1, 1}) : y;
}

}  // namespace brasa
