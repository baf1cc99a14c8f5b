#include <brasa/nn/conv3d.h>
#include <brasa/nn/init.h>
#include <brasa/ops/factory.h>

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

}  // namespace brasa::nn
