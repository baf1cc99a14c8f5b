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

// The CPU's fused bilinear 2-d kernels (ops/cpu/grid_sample_kernels.cpp)
// against the composite of gathers, reached through a 3-d sampling of a
// depth-1 volume at depth coordinate 0: its depth weights are exactly 1 and
// 0, so it is the 2-d composite. Sizes span several blocks of points.
namespace {

using namespace brasa;
namespace F = torch::nn::functional;

struct Sampled {
  Tensor out, grad_input, grad_grid;
};

Sampled fused(const Tensor& x, const Tensor& grid, const Tensor& go, int64_t padding, bool align) {
  Tensor xs = x.detach().requires_grad_(), gs = grid.detach().requires_grad_();
  Tensor out = torch::grid_sampler_2d(xs, gs, 0, padding, align);
  out.backward(go);
  return {out.detach(), xs.grad(), gs.grad()};
}

Sampled composite(const Tensor& x, const Tensor& grid, const Tensor& go, int64_t padding,
                  bool align) {
  Tensor xs = x.detach().requires_grad_(), gs = grid.detach().requires_grad_();
  Tensor grid3 = torch::cat({gs, torch::zeros_like(gs.narrow(3, 0, 1))}, 3).unsqueeze(1);
  Tensor out = torch::grid_sampler_3d(xs.unsqueeze(2), grid3, 0, padding, align).squeeze(2);
  out.backward(go);
  return {out.detach(), xs.grad(), gs.grad()};
}

TEST(GridSampleFused, MatchesTheCompositeInEveryPaddingMode) {
  torch::manual_seed(3);
  for (ScalarType t : {kDouble, kFloat})
    for (int64_t padding : {0, 1, 2})
      for (bool align : {false, true}) {
        SCOPED_TRACE(::testing::Message() << t << " padding " << padding << " align " << align);
        Tensor x = torch::randn({2, 3, 9, 11}, t);
        // 23 x 17 points (two blocks and a part) reaching well outside [-1, 1].
        Tensor grid = (torch::rand({2, 23, 17, 2}, t) * 2 - 1) * 1.8;
        Tensor go = torch::randn({2, 3, 23, 17}, t);
        Sampled a = fused(x, grid, go, padding, align);
        Sampled b = composite(x, grid, go, padding, align);
        const double tol = t == kDouble ? 1e-12 : 2e-5;
        EXPECT_TRUE(torch::allclose(a.out, b.out, tol, tol));
        EXPECT_TRUE(torch::allclose(a.grad_input, b.grad_input, tol, tol));
        EXPECT_TRUE(torch::allclose(a.grad_grid, b.grad_grid, tol, tol));
      }
}

TEST(GridSampleFused, NonContiguousInputsAndOneGradientAtATime) {
  torch::manual_seed(4);
  Tensor x = torch::randn({2, 9, 4, 3}, kDouble).permute({0, 3, 1, 2});  // [2, 3, 9, 4]
  Tensor grid = (torch::rand({2, 2, 5, 6}, kDouble) * 2.4 - 1.2).permute({0, 2, 3, 1});
  Tensor go = torch::randn({2, 3, 5, 6}, kDouble);
  Sampled b = composite(x, grid, go, 0, false);
  Tensor xs = x.detach().requires_grad_();
  torch::grid_sampler_2d(xs, grid, 0, 0, false).backward(go);
  EXPECT_TRUE(torch::allclose(xs.grad(), b.grad_input, 1e-12, 1e-12));
  Tensor gs = grid.detach().requires_grad_();
  Tensor out = torch::grid_sampler_2d(x, gs, 0, 0, false);
  EXPECT_TRUE(torch::allclose(out, b.out, 1e-12, 1e-12));
  out.backward(go);
  EXPECT_TRUE(torch::allclose(gs.grad(), b.grad_grid, 1e-12, 1e-12));
}

TEST(GridSampleFused, NonFinitePositionsSampleZerosInEveryMode) {
  Tensor x = torch::ones({1, 1, 3, 3});
  const float inf = std::numeric_limits<float>::infinity();
  Tensor grid =
      torch::tensor({std::nanf(""), 0.f, inf, 0.f, -inf, 0.5f, 0.f, 0.f}).view({1, 1, 4, 2});
  for (int64_t padding : {0, 1, 2}) {
    Tensor g = grid.clone().requires_grad_();
    Tensor out = torch::grid_sampler_2d(x, g, 0, padding, false);
    SCOPED_TRACE(padding);
    EXPECT_EQ(out[0][0][0][3].item<float>(), 1.0f);  // the centre
    EXPECT_EQ(out[0][0][0][0].item<float>(), 0.0f);  // NaN samples nothing
    EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
    out.sum().backward();
    EXPECT_TRUE(torch::isfinite(g.grad()).all().item<bool>());
  }
  // Far outside with kZeros: zeros.
  Tensor far = torch::full({1, 1, 2, 2}, 1e30f);
  EXPECT_VALUES(torch::grid_sampler_2d(x, far, 0, 0, false), {0, 0});
}

// Bit-identical on 1 and 2 threads: three samples (threads take samples),
// and one sample of 70 channels (its gradients go by groups of channels,
// the grid's summed from the groups' shares), which also matches the composite.
TEST(GridSampleFused, ResultsDoNotDependOnTheThreadCount) {
  torch::manual_seed(5);
  struct Case {
    Tensor x, grid, go;
    int64_t padding;
    bool align;
  };
  const Case cases[] = {
      {torch::randn({3, 4, 16, 16}), torch::rand({3, 20, 20, 2}) * 2.2 - 1.1,
       torch::randn({3, 4, 20, 20}), 2, false},
      {torch::randn({1, 70, 9, 10}, kDouble), torch::rand({1, 11, 12, 2}, kDouble) * 2.4 - 1.2,
       torch::randn({1, 70, 11, 12}, kDouble), 1, true}};
  const int threads = torch::get_num_threads();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.sizes());
    Sampled on[2];
    for (int t : {1, 2}) {
      torch::set_num_threads(t);
      on[t - 1] = fused(c.x, c.grid, c.go, c.padding, c.align);
    }
    torch::set_num_threads(threads);
    EXPECT_TRUE(torch::equal(on[0].out, on[1].out));
    EXPECT_TRUE(torch::equal(on[0].grad_input, on[1].grad_input));
    EXPECT_TRUE(torch::equal(on[0].grad_grid, on[1].grad_grid));
  }
  Sampled c = composite(cases[1].x, cases[1].grid, cases[1].go, 1, true);
  Sampled a = fused(cases[1].x, cases[1].grid, cases[1].go, 1, true);
  EXPECT_TRUE(torch::allclose(a.grad_input, c.grad_input, 1e-12, 1e-12));
  EXPECT_TRUE(torch::allclose(a.grad_grid, c.grad_grid, 1e-10, 1e-10));
}

TEST(GridSampleFused, SecondDerivativesGoThroughTheComposite) {
  torch::manual_seed(6);
  Tensor x = torch::randn({1, 2, 3, 4}, kDouble).requires_grad_();
  Tensor grid = (torch::rand({1, 2, 3, 2}, kDouble) * 2.4 - 1.2).requires_grad_();
  for (int64_t padding : {0, 1, 2})
    EXPECT_TRUE(autograd::gradgradcheck(
        [padding](const autograd::variable_list& v) {
          return autograd::variable_list{torch::grid_sampler_2d(v[0], v[1], 0, padding, true)};
        },
        {x, grid}));
}

}  // namespace
