#pragma once
// Spatial transformers: F::affine_grid (the sampling grid of a batch of
// affine maps) and F::grid_sample (input values at a grid of normalized
// coordinates in [-1, 1]: bilinear, nearest, or bicubic for 4-D input;
// padding kZeros, kBorder or kReflection), with libtorch's top-level
// spellings grid_sampler / grid_sampler_2d / grid_sampler_3d and
// affine_grid_generator. Both input and grid get gradients. Bilinear 2-d
// float/double sampling runs the device's fused kernels where it has them
// (the CPU does); every other case is a composite of gathers.
#include <brasa/nn/functional.h>
#include <brasa/nn/module_options.h>
#include <brasa/tensor/tensor.h>

#include <optional>

namespace brasa::nn::functional {

struct GridSampleFuncOptions {
  BRASA_ARG(InterpolateMode, mode, InterpolateMode::Bilinear);  // kBilinear, kNearest, kBicubic
  BRASA_ARG(PaddingMode, padding_mode, PaddingMode::Zeros);     // kZeros, kBorder, kReflection
  BRASA_ARG(std::optional<bool>, align_corners, std::nullopt);  // false when not given
};

// input [N, C, H, W] with grid [N, Ho, Wo, 2] (x, y), or [N, C, D, H, W] with
// grid [N, Do, Ho, Wo, 3] (x, y, z); gives [N, C, Ho, Wo] or [N, C, Do, Ho, Wo].
Tensor grid_sample(const Tensor& input, const Tensor& grid,
                   const GridSampleFuncOptions& options = {});
// theta [N, 2, 3] with size [N, C, H, W] gives a grid [N, H, W, 2]; theta
// [N, 3, 4] with size [N, C, D, H, W] a grid [N, D, H, W, 3].
Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners = false);

}  // namespace brasa::nn::functional

namespace brasa {
// interpolation_mode 0 bilinear, 1 nearest, 2 bicubic; padding_mode 0 zeros,
// 1 border, 2 reflection.
Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                    int64_t padding_mode, bool align_corners);
Tensor grid_sampler_2d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                       int64_t padding_mode, bool align_corners);
Tensor grid_sampler_3d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                       int64_t padding_mode, bool align_corners);
Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners);
}  // namespace brasa
