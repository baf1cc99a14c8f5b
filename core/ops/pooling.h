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

}  // namespace brasa
