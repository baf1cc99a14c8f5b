#pragma once
// Convolutions (NCHW) through im2col + GEMM. conv1d is conv2d with H = 1;
// conv3d is one conv2d over the depth taps stacked as channels.
#include <brasa/tensor/tensor.h>

namespace brasa {

// float32 convolutions run through oneDNN when this build has it (CMake
// BRASA_ONEDNN) and it is enabled (the default); im2col + OpenBLAS GEMM
// otherwise, and always for float64. Like PyTorch's
// torch.backends.mkldnn.enabled, the switch is process-wide; BRASA_ONEDNN=0
// in the environment turns it off at start.
bool has_onednn();
void set_onednn_enabled(bool enabled);
bool onednn_enabled();

// How float32 convolutions train on the CPU when oneDNN is enabled: its
// direct forward and gradients, or im2col + GEMM (whose forward keeps the
// column matrix for the weight gradient), or by default (kAuto) the rule
// measured per shape. BRASA_CONV_TRAINING=onednn|im2col|auto in the
// environment sets the start value. Inference always takes oneDNN's forward.
enum class ConvTrainingPath { kAuto, kOneDNN, kIm2col };
void set_conv_training_path(ConvTrainingPath path);
ConvTrainingPath conv_training_path();

// 3x3 stride-1 float32 convolutions whose channels come in blocks of 16 run
// on oneDNN's Winograd kernels (F(4x4, 3x3), forward and both gradients)
// where this CPU has them (AVX-512) and each batch slice (one per thread)
// has at least 784 output pixels, at about half the time of the direct
// kernels (with fewer, their per-call weight transform loses); their results differ from the direct
// ones by a few ulps more
// (~1e-6 relative). Off (set_conv_winograd_enabled(false), or
// BRASA_CONV_WINOGRAD=0 in the environment at start), those layers keep the
// direct kernels.
void set_conv_winograd_enabled(bool enabled);
bool conv_winograd_enabled();

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntArrayRef stride = {1, 1}, IntArrayRef padding = {0, 0},
              IntArrayRef dilation = {1, 1}, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
              int64_t groups = 1);

// Volumetric convolution: input [N, C, D, H, W], weight [out, in / groups, kd, kh, kw].
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntArrayRef stride = {1, 1, 1}, IntArrayRef padding = {0, 0, 0},
              IntArrayRef dilation = {1, 1, 1}, int64_t groups = 1);

// The adjoint of conv2d: weight [in, out / groups, kh, kw]; output size
// (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntArrayRef stride = {1, 1}, IntArrayRef padding = {0, 0},
                        IntArrayRef output_padding = {0, 0}, int64_t groups = 1,
                        IntArrayRef dilation = {1, 1});

// conv_transpose2d with H = 1: input [N, C, L], weight [in, out / groups, k].
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntArrayRef stride = {1}, IntArrayRef padding = {0},
                        IntArrayRef output_padding = {0}, int64_t groups = 1,
                        IntArrayRef dilation = {1});

// Padding by name (libtorch's torch::kSame / torch::kValid): kValid is no
// padding; kSame keeps the spatial size (stride 1 only) and, when the total
// padding dilation * (k - 1) is odd, puts the extra element at the end.
enum class ConvPadding { Same, Valid };
inline constexpr ConvPadding kSame = ConvPadding::Same;
inline constexpr ConvPadding kValid = ConvPadding::Valid;
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation = {1, 1}, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation = {1, 1, 1}, int64_t groups = 1);

namespace detail {

// The depth taps of a 3-d convolution: output depth od, tap kd reads input
// depth od * stride - padding + kd * dilation, of D (zeros outside).
struct DepthTaps {
  int64_t D, OD, KD, stride, padding, dilation;
  // For tap kd, the outputs [first, first + count) read inside the input,
  // from depth `from` on.
  struct Range {
    int64_t first, count, from;
  };
  Range range(int64_t kd) const;
};
// The taps side by side: planes [N, OD, C, KD, H, W] with planes[n, od, c,
// kd] = x[n, c, od * stride - padding + kd * dilation] for x [N, C, D, H, W].
// Differentiable: its gradient is depth_taps_sum.
Tensor depth_taps(const Tensor& x, const DepthTaps& taps);
// The adjoint: each tap's planes added onto the depths it reads, into
// zeros of `input_shape` (a transposed 3-d convolution's depth step).
// Differentiable: its gradient is depth_taps.
Tensor depth_taps_sum(const Tensor& planes, const DepthTaps& taps, IntArrayRef input_shape);

}  // namespace detail

}  // namespace brasa
