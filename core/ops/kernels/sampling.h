#pragma once
// Op codes of grid sampling (nn/grid_sample.cpp), shared with the devices'
// kernels (ops/cpu/grid_sample_kernels.cpp). Optional: a device without them
// runs the composite of gathers.
#include <brasa/tensor/tensor.h>

#include <cstdint>

namespace brasa {

// F::grid_sample's padding modes, as grid_sampler's integer codes.
enum class GridPadding : int64_t { Zeros = 0, Border = 1, Reflection = 2 };

// Bilinear 2-d sampling: out [N, C, Ho, Wo] <- input [N, C, H, W] at grid
// [N, Ho, Wo, 2] (x, y in [-1, 1]); all three contiguous, one floating dtype,
// H * W below 2^31. Out-of-range and non-finite positions sample zeros
// (kZeros) or are brought inside first (kBorder, kReflection), as PyTorch.
struct GridSampler2dKernel {
  static constexpr const char* name = "grid_sampler_2d";
  using Fn = void (*)(const Tensor& input, const Tensor& grid, const Tensor& out,
                      GridPadding padding, bool align_corners);
};

// Its gradients in one pass over grad_out (contiguous, out's shape):
// grad_input (input's shape, zero-filled by the caller) and grad_grid (grid's
// shape); either undefined when not wanted.
struct GridSampler2dBackwardKernel {
  static constexpr const char* name = "grid_sampler_2d backward";
  using Fn = void (*)(const Tensor& grad_out, const Tensor& input, const Tensor& grid,
                      const Tensor& grad_input, const Tensor& grad_grid, GridPadding padding,
                      bool align_corners);
};

}  // namespace brasa
