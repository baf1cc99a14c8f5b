#pragma once
// Op codes of 2-D convolution (ops/conv.cpp), shared with the devices'
// kernels (ops/cpu/conv_kernels.cpp: im2col/col2im, and oneDNN's forward).
#include <brasa/tensor/tensor.h>

#include <cstdint>
#include <utility>

namespace brasa {
namespace detail {

// The shape of one 2-D convolution: input [N, C, H, W], weight [O, C / groups,
// kh, kw], stride, padding, dilation, output [N, O, OH, OW].
struct ConvGeometry {
  int64_t N, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW, groups;
  int64_t K() const { return C / groups * kh * kw; }  // rows of one group's column matrix
  int64_t L() const { return OH * OW; }
};

}  // namespace detail

// cols [C*kh*kw, N*L] <- the column matrix of x [N, C, H, W] (contiguous):
// sample n at columns n*L .. (n+1)*L.
struct Im2ColKernel {
  static constexpr const char* name = "conv2d (im2col)";
  using Fn = void (*)(const Tensor& x, const Tensor& cols, const detail::ConvGeometry& g);
};
// x [N, C, H, W] <- the sum of the column entries of cols back at their positions.
struct Col2ImKernel {
  static constexpr const char* name = "conv2d backward (col2im)";
  using Fn = void (*)(const Tensor& cols, const Tensor& x, const detail::ConvGeometry& g);
};
// A device's direct forward y = conv(x, w) + b (b may be undefined), or an
// undefined tensor when it has none for these arguments (then im2col + GEMM).
struct ConvForwardKernel {
  static constexpr const char* name = "conv2d";
  using Fn = Tensor (*)(const Tensor& x, const Tensor& w, const Tensor& b,
                        const detail::ConvGeometry& g);
};

// A device's direct gradients of conv2d from grad_out, the input and the
// weight: (grad_input when want_input, grad_weight when want_weight). A
// device that registers it also runs the forward directly when training
// (the input is saved, not a column matrix).
struct ConvBackwardKernel {
  static constexpr const char* name = "conv2d backward";
  using Fn = std::pair<Tensor, Tensor> (*)(const Tensor& grad_out, const Tensor& x, const Tensor& w,
                                           const detail::ConvGeometry& g, bool want_input,
                                           bool want_weight);
};

// Whether a device's direct kernels (ConvForwardKernel, ConvBackwardKernel)
// serve training for this convolution, or im2col + GEMM does. Optional: a
// device with ConvBackwardKernel and no rule always trains directly (CUDA).
struct ConvDirectTrainingKernel {
  static constexpr const char* name = "conv2d (direct training rule)";
  using Fn = bool (*)(const Tensor& x, const detail::ConvGeometry& g);
};

// grad_w [C, 1, kh, kw] <- the weight gradient of a depthwise conv2d
// (groups == C == O) from grad_out [N, C, OH, OW] and x [N, C, H, W], all
// contiguous float32. The CPU's, for the kernel sizes whose weight gradient
// oneDNN 2.x only has a GEMM-based kernel for (all but 3x3).
struct DepthwiseWeightGradKernel {
  static constexpr const char* name = "conv2d backward (depthwise weight gradient)";
  using Fn = void (*)(const float* grad_out, const float* x, float* grad_w,
                      const detail::ConvGeometry& g);
};

}  // namespace brasa
