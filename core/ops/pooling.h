#pragma once
// Pooling over the last two dims of [N, C, H, W] (or [C, H, W]) inputs.
#include <brasa/tensor/tensor.h>

#include <tuple>

namespace brasa {

// Windows along one dim of length `in`: kernel k, stride s, padding p,
// dilation d; with ceil_mode a last partial window counts when it starts
// inside the input or the left padding.
int64_t pool_output_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode);

// stride defaults to kernel_size (empty).
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, IntArrayRef dilation = {1}, bool ceil_mode = false);
// Also returns the flat index (h * W + w) of each maximum in its plane.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {},
                                                   IntArrayRef padding = {0},
                                                   IntArrayRef dilation = {1},
                                                   bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, bool ceil_mode = false, bool count_include_pad = true);

struct Pool3dGeometry;
namespace detail {
// Max pooling of [..., D, H, W] by the device's MaxPool3dKernel (which the
// caller checked it has) over windows the caller planned: values and, when
// asked or recorded for the gradient, the flat argmax in each volume.
std::tuple<Tensor, Tensor> max_pool3d_windows(const Tensor& input, const Pool3dGeometry& g,
                                              bool want_indices);
}  // namespace detail

}  // namespace brasa
