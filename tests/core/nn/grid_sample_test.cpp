// F::affine_grid and F::grid_sample (nn/grid_sample.h) against PyTorch's
// outputs and gradients in every mode; their error paths. Gradients are
// also in the gradcheck table.
#include <brasa/torch.h>

#include "../ops/golden_util.h"
#include "../test_util.h"

namespace {

using namespace brasa;
namespace F = torch::nn::functional;
using golden::expect_golden;
using golden::S;

Tensor sampled(double scale, InterpolateMode mode, PaddingMode padding, bool align) {
  return F::grid_sample(
      S({2, 3, 4, 5}), S({2, 3, 2, 2}, 1.3, 0.2) * scale,
      F::GridSampleFuncOptions().mode(mode).padding_mode(padding).align_corners(align));
}

TEST(AffineGrid, MatchesPyTorch) {
  expect_golden("affine_grid_2d", F::affine_grid(S({2, 2, 3}, 0.7, 0.2), {2, 3, 3, 4}));
  expect_golden("affine_grid_2d_align",
                torch::affine_grid_generator(S({2, 2, 3}, 0.7, 0.2), {2, 3, 3, 4}, true));
  expect_golden("affine_grid_3d", F::affine_grid(S({1, 3, 4}, 0.7, 0.2), {1, 2, 2, 3, 2}));
  // The identity map samples every pixel where it is.
  Tensor identity = torch::tensor({1.0, 0, 0, 0, 1, 0}, kDouble).view({1, 2, 3});
  Tensor x = S({1, 2, 3, 4});
  EXPECT_TRUE(
      torch::allclose(F::grid_sample(x, F::affine_grid(identity, {1, 2, 3, 4})), x, 1e-12, 1e-12));
}

TEST(GridSample, EveryModeMatchesPyTorch) {
  expect_golden("grid_sample_bilinear_zeros", sampled(1.3, torch::kBilinear, torch::kZeros, false));
  expect_golden("grid_sample_bilinear_border_align",
                sampled(1.3, torch::kBilinear, torch::kBorder, true));
  expect_golden("grid_sample_bilinear_reflection",
                sampled(2.7, torch::kBilinear, torch::kReflection, false));
  expect_golden("grid_sample_bilinear_reflection_align",
                sampled(2.7, torch::kBilinear, torch::kReflection, true));
  expect_golden("grid_sample_nearest_zeros", sampled(1.3, torch::kNearest, torch::kZeros, false));
  expect_golden("grid_sample_nearest_reflection",
                sampled(2.7, torch::kNearest, torch::kReflection, true));
  expect_golden("grid_sample_bicubic_zeros", sampled(1.3, torch::kBicubic, torch::kZeros, false));
  expect_golden("grid_sample_bicubic_border", sampled(1.3, torch::kBicubic, torch::kBorder, true));
  expect_golden("grid_sample_bicubic_reflection",
                sampled(2.7, torch::kBicubic, torch::kReflection, false));
  expect_golden(
      "grid_sample_3d_bilinear",
      torch::grid_sampler_3d(S({1, 2, 3, 4, 3}), S({1, 2, 2, 3, 3}, 1.3, 0.2) * 1.2, 0, 0, false));
  expect_golden(
      "grid_sample_3d_nearest_border",
      torch::grid_sampler(S({1, 2, 3, 4, 3}), S({1, 2, 2, 3, 3}, 1.3, 0.2) * 1.2, 1, 1, true));
}

TEST(GridSample, GradientsMatchPyTorch) {
  Tensor x = S({1, 2, 4, 5}).requires_grad_();
  Tensor g = (S({1, 3, 2, 2}, 1.3, 0.2) * 1.7).detach().requires_grad_();
  torch::grid_sampler_2d(x, g, 0, 2, false).backward(S({1, 2, 3, 2}, 0.4, 0.3));
  expect_golden("grid_sample_grads", torch::cat({x.grad().flatten(), g.grad().flatten()}));
}

TEST(GridSample, BadInputGetsClearErrors) {
  EXPECT_ERROR("grid_sampler(): expected input and grid to have same dtype",
               F::grid_sample(S({1, 1, 2, 2}), S({1, 2, 2, 2}).to(kFloat)));
  EXPECT_ERROR("grid_sampler(): expected 4D or 5D input and grid with same number of dimensions",
               F::grid_sample(S({1, 1, 2, 2}), S({1, 2, 2, 2, 3})));
  EXPECT_ERROR("grid_sampler(): expected grid and input to have same batch size",
               F::grid_sample(S({1, 1, 2, 2}), S({2, 2, 2, 2})));
  EXPECT_ERROR("grid_sampler(): expected grid to have size 2 in last dimension",
               F::grid_sample(S({1, 1, 2, 2}), S({1, 2, 2, 3})));
  EXPECT_ERROR("grid_sampler(): bicubic interpolation only supports 4D input",
               F::grid_sample(S({1, 1, 2, 2, 2}), S({1, 2, 2, 2, 3}),
                              F::GridSampleFuncOptions().mode(torch::kBicubic)));
  EXPECT_ERROR("grid_sampler(): padding_mode must be kZeros, kBorder or kReflection",
               F::grid_sample(S({1, 1, 2, 2}), S({1, 2, 2, 2}),
                              F::GridSampleFuncOptions().padding_mode(torch::kCircular)));
  EXPECT_ERROR("affine_grid only supports 4D and 5D sizes",
               F::affine_grid(S({1, 2, 3}), {1, 2, 3}));
  EXPECT_ERROR(
      "Expected a batch of 2D affine matrices of shape Nx2x3 for size [1, 1, 2, 2]. Got "
      "[1, 3, 4].",
      F::affine_grid(S({1, 3, 4}), {1, 1, 2, 2}));
  EXPECT_ERROR("Expected non-zero, positive output size",
               F::affine_grid(S({1, 2, 3}), {1, 1, 0, 2}));
}

}  // namespace

namespace {

using namespace brasa;
namespace F = torch::nn::functional;

TEST(GridSample, MoreBadInputGetsClearErrors) {
  Tensor x = golden::S({1, 1, 2, 2}), g = golden::S({1, 2, 2, 2});
  EXPECT_ERROR("grid_sampler(): interpolation_mode must be 0 (bilinear), 1 (nearest) or 2",
               torch::grid_sampler(x, g, 3, 0, false));
  EXPECT_ERROR("grid_sampler(): padding_mode must be 0 (zeros), 1 (border) or 2 (reflection)",
               torch::grid_sampler(x, g, 0, 3, false));
  EXPECT_ERROR(
      "grid_sampler_2d: expected a 4-D input",
      torch::grid_sampler_2d(golden::S({1, 1, 2, 2, 2}), golden::S({1, 2, 2, 2, 3}), 0, 0, false));
  EXPECT_ERROR("grid_sampler_3d: expected a 5-D input", torch::grid_sampler_3d(x, g, 0, 0, false));
  EXPECT_ERROR("grid_sampler(): expected a floating-point input, got Long",
               F::grid_sample(golden::L({1, 2, 3, 4}).view({1, 1, 2, 2}), g.to(kLong)));
  EXPECT_ERROR("expected input to have non-empty spatial dimensions",
               F::grid_sample(torch::zeros({1, 1, 0, 2}, kDouble), g));
  EXPECT_ERROR("affine_grid: expected theta to be a floating point tensor",
               F::affine_grid(golden::L({1, 0, 0, 0, 1, 0}).view({1, 2, 3}), {1, 1, 2, 2}));
}

}  // namespace
