#pragma once
// The float32 2-D convolution forward through oneDNN (NCHW data, OIHW
// weights, no layout conversions). Used by ops/cpu/conv_kernels.cpp.
#include <brasa/ops/kernels/conv.h>
#include <brasa/tensor/scalar_type.h>

#include <cstdint>

namespace brasa::detail {

// True when this build has oneDNN, it is enabled (set_onednn_enabled) and
// `dtype` is float32; otherwise the convolutions use im2col + GEMM.
bool onednn_conv_usable(ScalarType dtype);

// oneDNN (built on OpenMP) gets one thread per call on the calling thread:
// our pool splits the work, so no second thread team competes for the cores.
// Call before each oneDNN call (a no-op after the first on a thread).
void onednn_use_one_thread();

// y [N, O, OH, OW] = conv(x [N, C, H, W], w [O, C / groups, kh, kw]) + b (b may be null).
// With `blocked`, on the layouts oneDNN prefers (its JIT kernels; x, w and y
// are moved in and out), otherwise on the plain ones. With `x_nhwc` x lies
// channels last ([N, H, W, C] in memory; blocked only, no groups) and is
// read as it lies.
void onednn_conv_forward(const float* x, const float* w, const float* b, float* y,
                         const ConvGeometry& g, bool blocked, bool x_nhwc);

// Whether oneDNN has JIT kernels on this CPU (not only its reference loops)
// for the forward of geometry g on the layouts `blocked` picks (see
// onednn_conv_forward), and with `gradients` for both gradients too.
bool onednn_conv_is_fast(const ConvGeometry& g, bool blocked, bool gradients);

// Whether the forward and gradients of geometry g take oneDNN's Winograd
// kernels (on for 3x3 layers where they pay: enough output pixels per batch
// slice, and kernels on this CPU; see set_conv_winograd_enabled).
bool onednn_conv_uses_winograd(const ConvGeometry& g);

// Whether oneDNN has fast (JIT) kernels on this CPU for the convolution of
// geometry g with its input channels last: its forward, or with `gradients`
// both its gradients.
bool onednn_reads_channels_last(const ConvGeometry& g, bool gradients);

// The gradients of that convolution from grad_out [N, O, OH, OW]: grad_x
// [N, C, H, W] and grad_w [O, C / groups, kh, kw], each skipped when null.
// With `x_nhwc` (no groups) x is read and grad_x written channels last.
void onednn_conv_backward(const float* grad_out, const float* x, const float* w, float* grad_x,
                          float* grad_w, const ConvGeometry& g, bool x_nhwc);

}  // namespace brasa::detail
