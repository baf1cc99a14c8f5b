#pragma once
// The shape of one 2-D convolution, and its float32 forward through oneDNN
// (NCHW data, OIHW weights, no layout conversions). Internal to ops/conv.cpp.
#include <brasa/tensor/scalar_type.h>

#include <cstdint>

namespace brasa::detail {

struct ConvGeometry {
  int64_t N, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW, groups;
  int64_t K() const { return C / groups * kh * kw; }  // rows of one group's column matrix
  int64_t L() const { return OH * OW; }
};

// True when this build has oneDNN, it is enabled (set_onednn_enabled) and
// `dtype` is float32; otherwise the convolutions use im2col + GEMM.
bool onednn_conv_usable(ScalarType dtype);

// y [N, O, OH, OW] = conv(x [N, C, H, W], w [O, C / groups, kh, kw]) + b (b may be null).
void onednn_conv_forward(const float* x, const float* w, const float* b, float* y,
                         const ConvGeometry& g);

}  // namespace brasa::detail
