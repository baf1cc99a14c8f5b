// The libtorch functions added for porting, against PyTorch's outputs
// (libtorch_goldens.h, from gen_libtorch_goldens.py), spelled as libtorch
// code spells them; their error paths; their gradients are in the gradcheck
// table.
#include <brasa/torch.h>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;

using golden::D;
using golden::expect_golden;
using golden::L;
using golden::S;

// cdist with more than 25 rows goes by matrix products: the same distances
// as the broadcast difference, and (as PyTorch) a zero gradient where a
// distance is 0.
TEST(LibtorchFunctions, CdistByMatrixProductsMatchesTheDifferences) {
  Tensor a = S({40, 6}, 0.37, 0.1), b = S({3, 6}, 0.61, 0.4);
  Tensor want = (a.unsqueeze(1) - b.unsqueeze(0)).pow(2).sum({-1}).sqrt();
  EXPECT_TRUE(allclose(torch::cdist(a, b), want, 1e-9, 1e-9));
  Tensor x = a.clone().requires_grad_();
  Tensor same = cat({x.narrow(0, 7, 1).detach(), b}, 0);  // row 0 equals x's row 7
  Tensor d = torch::cdist(x, same);
  EXPECT_NEAR(d[7][0].item<double>(), 0.0, 1e-6);
  d.sum().backward();
  // Row 7's gradient comes from the other three columns only.
  Tensor others = (x.detach()[7] - b) / (x.detach()[7] - b).norm(2, {1}, true);
  EXPECT_TRUE(allclose(x.grad()[7], others.sum(0), 1e-6, 1e-6)) << x.grad()[7] << others.sum(0);
  EXPECT_FALSE(x.grad().isnan().any().item<bool>());
}

TEST(LibtorchFunctions, RearrangingOpsMatchPyTorch) {
  expect_golden("trace", torch::trace(S({3, 4})));
  expect_golden("kron", torch::kron(S({2, 3}), S({2, 2}, 0.7, 0.2)));
  expect_golden("kron_1d_2d", torch::kron(S({3}), S({2, 2}, 0.7, 0.2)));
  expect_golden("diff_n2_prepend", torch::diff(S({3, 5}), 2, 1, S({3, 1}, 0.9, 0.3)));
  expect_golden("diff_dim0_append", torch::diff(S({3, 2}), 1, 0, {}, S({2, 2}, 0.5, 0.5)));
  expect_golden("diff_bool", torch::diff(tensor(std::vector<bool>{true, false, false, true})));
  expect_golden("rot90_k1", torch::rot90(S({2, 3, 4}), 1, {1, 2}));
  expect_golden("rot90_km1", torch::rot90(S({2, 3, 4}), -1, {0, 2}));
  expect_golden("rot90_k2", torch::rot90(S({2, 3, 4}), 2, {0, 1}));
  expect_golden("diag_embed_offset1", torch::diag_embed(S({2, 3}), 1, 0, 2));
  expect_golden("diag_embed_offsetm1", torch::diag_embed(S({2, 3}), -1));
  auto ij = torch::meshgrid({S({3}), S({2}, 0.6)}, "ij");
  auto xy = torch::meshgrid({S({3}), S({2}, 0.6)}, "xy");
  expect_golden("meshgrid_ij_0", ij[0]);
  expect_golden("meshgrid_ij_1", ij[1]);
  expect_golden("meshgrid_xy_0", xy[0]);
  expect_golden("meshgrid_xy_1", xy[1]);
  expect_golden("repeat_interleave_flat", torch::repeat_interleave(S({2, 3}), 2));
  expect_golden("repeat_interleave_dim1", torch::repeat_interleave(S({2, 3}), L({1, 0, 2}), 1));
  expect_golden("repeat_interleave_index", torch::repeat_interleave(L({2, 0, 3})));
  expect_golden("cross_dim1", torch::cross(S({4, 3}), S({4, 3}, 0.5, 0.4), 1));
  expect_golden("cross_default", torch::cross(S({3, 2}), S({3, 2}, 0.5, 0.4)));
  expect_golden("cdist_p2", torch::cdist(S({2, 3, 4}), S({2, 5, 4}, 0.6, 0.2)));
  expect_golden("cdist_p1", torch::cdist(S({2, 3, 4}), S({2, 5, 4}, 0.6, 0.2), 1));
  expect_golden("cdist_p3", torch::cdist(S({2, 3, 4}), S({2, 5, 4}, 0.6, 0.2), 3));
  expect_golden("cdist_pinf", torch::cdist(S({2, 3, 4}), S({2, 5, 4}, 0.6, 0.2), INFINITY));
  expect_golden("cdist_p0",
                torch::cdist(D({0, 1, 2, 1, 1, 1}).view({2, 3}), D({0, 1, 5}).view({1, 3}), 0));
  expect_golden("index_copy", torch::index_copy(S({4, 3}), 0, L({3, 0}), S({2, 3}, 0.8, 0.5)));
  expect_golden("index_fill", torch::index_fill(S({3, 4}), 1, L({0, 2}), -1.5));
  expect_golden("masked_scatter",
                torch::masked_scatter(S({3, 4}), S({3, 4}, 1.3, 0.2) > 0, S({12}, 0.4, 0.9)));
}

// Every mode of F::interpolate at each rank, sizes and scale factors (the
// factor also sets the sampling positions unless recomputed), align_corners
// and antialias.
TEST(LibtorchFunctions, InterpolateMatchesPyTorchInEveryMode) {
  namespace F = torch::nn::functional;
  using O = F::InterpolateFuncOptions;
  const auto sizes = [](std::vector<int64_t> v) { return O().size(v); };
  const auto scales = [](std::vector<double> v) { return O().scale_factor(v); };
  expect_golden("interp_nearest_1d_scale", F::interpolate(S({2, 2, 5}), scales({1.7})));
  expect_golden("interp_nearest_1d_scale_recompute",
                F::interpolate(S({2, 2, 5}), scales({1.7}).recompute_scale_factor(true)));
  expect_golden("interp_nearest_2d_size", F::interpolate(S({1, 2, 3, 4}), sizes({5, 3})));
  expect_golden("interp_nearest_exact_2d",
                F::interpolate(S({1, 2, 3, 4}), sizes({5, 7}).mode(torch::kNearestExact)));
  expect_golden("interp_nearest_exact_down",
                F::interpolate(S({1, 1, 7, 9}), sizes({3, 4}).mode(torch::kNearestExact)));
  expect_golden("interp_nearest_3d_scale",
                F::interpolate(S({1, 2, 2, 3, 4}), scales({1.5, 2.0, 0.5})));
  expect_golden("interp_linear_size",
                F::interpolate(S({2, 2, 5}), sizes({7}).mode(torch::kLinear).align_corners(false)));
  expect_golden("interp_linear_align",
                F::interpolate(S({2, 2, 5}), sizes({7}).mode(torch::kLinear).align_corners(true)));
  expect_golden("interp_linear_scale",
                F::interpolate(S({1, 2, 5}), scales({1.7}).mode(torch::kLinear)));
  expect_golden("interp_linear_scale_recompute",
                F::interpolate(S({1, 2, 5}),
                               scales({1.7}).mode(torch::kLinear).recompute_scale_factor(true)));
  expect_golden(
      "interp_bilinear_align",
      F::interpolate(S({1, 2, 3, 4}), sizes({5, 7}).mode(torch::kBilinear).align_corners(true)));
  expect_golden("interp_bilinear_down_scale",
                F::interpolate(S({1, 2, 7, 9}), scales({0.6, 0.6}).mode(torch::kBilinear)));
  expect_golden("interp_bicubic_size",
                F::interpolate(S({1, 2, 3, 4}), sizes({5, 7}).mode(torch::kBicubic)));
  expect_golden(
      "interp_bicubic_align",
      F::interpolate(S({1, 2, 3, 4}), sizes({5, 7}).mode(torch::kBicubic).align_corners(true)));
  expect_golden("interp_bicubic_down",
                F::interpolate(S({1, 1, 6, 7}), sizes({2, 3}).mode(torch::kBicubic)));
  expect_golden("interp_bicubic_scale",
                F::interpolate(S({1, 1, 4, 5}), scales({1.5, 2.5}).mode(torch::kBicubic)));
  expect_golden("interp_trilinear_size",
                F::interpolate(S({1, 2, 2, 3, 4}), sizes({3, 4, 5}).mode(torch::kTrilinear)));
  expect_golden("interp_trilinear_align",
                F::interpolate(S({1, 1, 2, 3, 4}),
                               sizes({3, 5, 2}).mode(torch::kTrilinear).align_corners(true)));
  expect_golden("interp_area_1d", F::interpolate(S({1, 2, 7}), sizes({3}).mode(torch::kArea)));
  expect_golden("interp_area_2d",
                F::interpolate(S({1, 2, 5, 7}), sizes({2, 3}).mode(torch::kArea)));
  expect_golden("interp_area_3d",
                F::interpolate(S({1, 1, 4, 5, 6}), sizes({2, 3, 4}).mode(torch::kArea)));
  expect_golden(
      "interp_aa_bilinear_down",
      F::interpolate(S({1, 2, 9, 10}), sizes({4, 3}).mode(torch::kBilinear).antialias(true)));
  expect_golden(
      "interp_aa_bilinear_up",
      F::interpolate(S({1, 1, 3, 4}), sizes({5, 7}).mode(torch::kBilinear).antialias(true)));
  expect_golden(
      "interp_aa_bilinear_align",
      F::interpolate(S({1, 1, 9, 10}),
                     sizes({4, 3}).mode(torch::kBilinear).antialias(true).align_corners(true)));
  expect_golden(
      "interp_aa_bilinear_scale",
      F::interpolate(S({1, 1, 9, 10}), scales({0.4, 0.4}).mode(torch::kBilinear).antialias(true)));
  expect_golden(
      "interp_aa_bicubic_down",
      F::interpolate(S({1, 2, 9, 10}), sizes({4, 3}).mode(torch::kBicubic).antialias(true)));
  // A factor that leaves a size unchanged.
  expect_golden("interp_bicubic_scale_same_h",
                F::interpolate(S({1, 1, 4, 5}), scales({1.1, 2.0}).mode(torch::kBicubic)));
  expect_golden("interp_linear_scale_same",
                F::interpolate(S({1, 1, 5}), scales({1.1}).mode(torch::kLinear)));
  expect_golden("interp_nearest_exact_scale_same",
                F::interpolate(S({1, 1, 5}), scales({1.1}).mode(torch::kNearestExact)));
  expect_golden(
      "interp_aa_bilinear_same_w",
      F::interpolate(S({1, 1, 8, 5}), scales({0.5, 1.1}).mode(torch::kBilinear).antialias(true)));
  expect_golden(
      "interp_aa_bicubic_mixed",
      F::interpolate(S({1, 1, 5, 12}), sizes({8, 5}).mode(torch::kBicubic).antialias(true)));
  // The string form, and nearest keeps integer tensors.
  expect_golden("interp_bicubic_size", F::interpolate(S({1, 2, 3, 4}), {5, 7}, "bicubic"));
  Tensor ints = arange(6).view({1, 1, 2, 3});
  EXPECT_TRUE(F::interpolate(ints, sizes({2, 6})).equal(torch::repeat_interleave(ints, 2, 3)));
  // The nodes carry PyTorch 1.13's names, for the op and for its backward.
  Tensor leaf = S({1, 1, 3, 4}).requires_grad_(true);
  Tensor up2 = F::interpolate(leaf, sizes({5, 7}).mode(torch::kBilinear).align_corners(false));
  EXPECT_EQ(up2.grad_fn()->name(), "UpsampleBilinear2DBackward1");
  Tensor go = torch::ones_like(up2).requires_grad_(true);
  auto g = torch::autograd::grad({up2}, {leaf}, {go}, true, true);
  EXPECT_EQ(g[0].grad_fn()->name(), "UpsampleBilinear2DBackwardBackward1");
  EXPECT_EQ(
      F::interpolate(leaf, sizes({2, 2}).mode(torch::kBicubic).antialias(true)).grad_fn()->name(),
      "UpsampleBicubic2DAaBackward1");
  // Upsample is the module form.
  auto up = torch::nn::Upsample(
      torch::nn::UpsampleOptions().size({5, 7}).mode(torch::kBicubic).align_corners(true));
  expect_golden("interp_bicubic_align", up(S({1, 2, 3, 4})));
}

TEST(LibtorchFunctions, InterpolateSaysWhatIsWrong) {
  namespace F = torch::nn::functional;
  using O = F::InterpolateFuncOptions;
  Tensor x4 = S({1, 1, 2, 2});
  EXPECT_ERROR(
      "interpolate: scale_factor shape must match input shape. Input is 4D, scale_factor "
      "size is 1",
      F::interpolate(x4, O().scale_factor(std::vector<double>{2.0})));
  EXPECT_ERROR("interpolate: either size or scale_factor should be defined",
               F::interpolate(x4, O()));
  EXPECT_ERROR("interpolate: only one of size or scale_factor should be defined",
               F::interpolate(x4, O().size(std::vector<int64_t>{3, 3}).scale_factor({2.0, 2.0})));
  EXPECT_ERROR(
      "interpolate: Input and output must have the same number of spatial dimensions, "
      "but got input with spatial dimensions of [2, 2] and output size of [3]",
      F::interpolate(x4, O().size(std::vector<int64_t>{3})));
  EXPECT_ERROR("interpolate: align_corners option can only be set with the interpolating modes",
               F::interpolate(x4, O().size(std::vector<int64_t>{3, 3}).align_corners(false)));
  EXPECT_ERROR("interpolate: Got 4D input, but linear mode needs 3D input",
               F::interpolate(x4, O().size(std::vector<int64_t>{3, 3}).mode(torch::kLinear)));
  EXPECT_ERROR("interpolate: Got 4D input, but trilinear mode needs 5D input",
               F::interpolate(x4, O().size(std::vector<int64_t>{3, 3}).mode(torch::kTrilinear)));
  EXPECT_ERROR(
      "interpolate: Got 3D input, but bicubic mode needs 4D input",
      F::interpolate(S({1, 1, 4}), O().size(std::vector<int64_t>{3}).mode(torch::kBicubic)));
  EXPECT_ERROR(
      "interpolate: Input Error: Only 3D, 4D and 5D input Tensors supported (got 2D) for "
      "the modes: nearest | linear | bilinear | bicubic | trilinear (got kNearest)",
      F::interpolate(S({2, 2}), O().size(std::vector<int64_t>{3})));
  EXPECT_ERROR("interpolate: Anti-alias option is only supported for bilinear and bicubic modes",
               F::interpolate(x4, O().size(std::vector<int64_t>{1, 1}).antialias(true)));
  EXPECT_ERROR(
      "interpolate: Input and output sizes should be greater than 0, but got input [2, 2] "
      "output [0, 0]",
      F::interpolate(x4, O().scale_factor({0.4, 0.4})));
  EXPECT_ERROR("interpolate: scale_factor must be positive, got -2",
               F::interpolate(x4, O().scale_factor({-2.0, 2.0})));
  EXPECT_ERROR("interpolate: mode kBilinear needs a floating-point input, got Long",
               F::interpolate(arange(4).view({1, 1, 2, 2}),
                              O().size(std::vector<int64_t>{3, 3}).mode(torch::kBilinear)));
  EXPECT_ERROR(
      "interpolate: mode must be 'nearest', 'nearest-exact', 'linear', 'bilinear', "
      "'bicubic', 'trilinear' or 'area', got 'cubic'",
      F::interpolate(x4, {3, 3}, "cubic"));
}

TEST(LibtorchFunctions, CountingOpsMatchPyTorch) {
  expect_golden("median_all", torch::median(S({5, 4})));
  auto [mv, mi] = torch::median(S({5, 4}), 1);
  expect_golden("median_dim_values", mv);
  expect_golden("median_dim_indices", mi);
  auto [ov, oi] = torch::mode(L({1, 2, 2, 3, 3, 5, 5, 4, 4, 1}).view({2, 5}), 1);
  expect_golden("mode_values", ov);
  expect_golden("mode_indices", oi);
  EXPECT_EQ(ov.scalar_type(), kLong);
  expect_golden("histc_range", torch::histc(S({50}), 7, -0.5, 0.8));
  expect_golden("histc_data_range", torch::histc(S({50}), 5));
  Tensor w = torch::bincount(L({0, 1, 1, 3, 7}), S({5}));
  expect_golden("bincount_weights", w);
  EXPECT_EQ(w.scalar_type(), kDouble);
  EXPECT_EQ(torch::bincount(L({0, 1}), S({2}).to(kFloat)).scalar_type(), kFloat);
  expect_golden("bincount_minlength", torch::bincount(L({0, 1, 1, 3, 7}), {}, 10));
  Tensor bounds = D({-3, -1, 0, 1, 3});
  expect_golden("bucketize_left", torch::bucketize(S({3, 4}) * 5, bounds));
  expect_golden("bucketize_right", torch::bucketize(D({-3, 0, 0.5, 3}), bounds, false, true));
  EXPECT_EQ(torch::bucketize(D({1}), bounds, /*out_int32=*/true).scalar_type(), kInt);
  expect_golden("searchsorted_2d",
                torch::searchsorted(std::get<0>(torch::sort(S({2, 6}))), S({2, 3}, 0.7, 0.1)));
  expect_golden("searchsorted_right",
                torch::searchsorted(D({1, 3, 5, 7, 9}), D({3, 6, 9, 3, 6, 9}).view({2, 3}), false,
                                    false, "right"));
  expect_golden("searchsorted_sorter",
                torch::searchsorted(D({5, 1, 9, 3, 7}), D({4, 9}), false, false, std::nullopt,
                                    L({1, 3, 0, 4, 2})));
  EXPECT_EQ(torch::searchsorted(D({1, 3, 5}), Scalar(4.0)).item<int64_t>(), 2);
}

TEST(LibtorchFunctions, TopLevelNnFunctionsMatchPyTorch) {
  expect_golden("nll_loss_weight_ignore_sum",
                torch::nll_loss(torch::log_softmax(S({5, 3}), 1), L({0, 2, 1, 1, 2}),
                                D({0.2, 1.0, 3.0}), /*reduction=*/2, /*ignore_index=*/1));
  expect_golden("mse_loss_none", torch::mse_loss(S({2, 3}), S({2, 3}, 0.5, 0.3), torch::kNone));
  expect_golden("smooth_l1_loss_beta",
                torch::smooth_l1_loss(S({8}) * 2, S({8}, 0.5, 0.3), torch::kMean, 0.5));
  expect_golden("binary_cross_entropy_weight",
                torch::binary_cross_entropy(torch::sigmoid(S({6})),
                                            (S({6}, 0.9, 0.4) > 0).to(kDouble), S({6}, 0.2, 1.0)));
  expect_golden("gelu_tanh", torch::gelu(S({7}) * 3, "tanh"));
  expect_golden("layer_norm_affine",
                torch::layer_norm(S({2, 3, 4}), {3, 4}, S({3, 4}, 0.3, 0.7), S({3, 4}, 0.2, 0.1)));
  expect_golden("embedding_padding",
                torch::embedding(S({4, 3}), L({0, 2, 3, 2}).view({2, 2}), /*padding_idx=*/2));
  expect_golden("pad_reflect", torch::pad(S({1, 2, 5}), {1, 2}, "reflect"));
  expect_golden("pad_constant_value", torch::pad(S({2, 3}), {1, 0, 0, 2}, "constant", 0.5));
  expect_golden("threshold", torch::threshold(S({9}), 0.1, 20.0));
  expect_golden("hardtanh", torch::hardtanh(S({9}), -0.5, 0.5));
  namespace F = torch::nn::functional;
  expect_golden(
      "interpolate_nearest_scale2",
      F::interpolate(S({1, 2, 3, 4}),
                     F::InterpolateFuncOptions().scale_factor({2.0, 2.0}).mode(torch::kNearest)));
  expect_golden(
      "interpolate_bilinear_size",
      F::interpolate(
          S({1, 2, 3, 4}),
          F::InterpolateFuncOptions().size({5, 7}).mode(torch::kBilinear).align_corners(false)));
  // dropout: p = 0 keeps everything, eval keeps everything, p = 1 zeroes.
  Tensor x = S({10});
  EXPECT_TRUE(torch::dropout(x, 0.0, true).equal(x));
  EXPECT_TRUE(torch::dropout(x, 0.7, false).equal(x));
  EXPECT_EQ(torch::dropout(x, 1.0, true).abs().sum().item<double>(), 0.0);
}

TEST(LibtorchFunctions, MoreActivationsAndLossesMatchPyTorch) {
  namespace F = torch::nn::functional;
  namespace nn = torch::nn;
  expect_golden("softmin", F::softmin(S({2, 5}) * 2, F::SoftminFuncOptions(1)));
  expect_golden("softmin", nn::Softmin(1)(S({2, 5}) * 2));
  expect_golden("softsign", F::softsign(S({7}) * 3));
  expect_golden("softsign", nn::Softsign()(S({7}) * 3));
  expect_golden("softshrink", F::softshrink(S({9}), 0.3));
  expect_golden("softshrink", nn::Softshrink(nn::SoftshrinkOptions().lambda(0.3))(S({9})));
  expect_golden("hardshrink", F::hardshrink(S({9}), F::HardshrinkFuncOptions().lambda(0.3)));
  expect_golden("tanhshrink", nn::Tanhshrink()(S({7}) * 2));
  expect_golden("logsigmoid", nn::LogSigmoid()(S({7}) * 5));
  expect_golden("celu", F::celu(S({7}) * 2, F::CELUFuncOptions().alpha(0.7)));
  expect_golden("glu", nn::GLU(1)(S({2, 6})));
  expect_golden("threshold_module", nn::Threshold(0.2, -3.0)(S({8})));
  expect_golden("margin_ranking_loss",
                nn::MarginRankingLoss(nn::MarginRankingLossOptions().margin(0.1))(
                    S({6}), S({6}, 0.5, 0.3), D({1, -1, 1, 1, -1, -1})));
  expect_golden("hinge_embedding_loss",
                F::hinge_embedding_loss(
                    S({6}) * 2, D({1, -1, 1, -1, -1, 1}),
                    F::HingeEmbeddingLossFuncOptions().margin(0.5).reduction(torch::kNone)));
  expect_golden("cosine_embedding_loss",
                nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.2))(
                    S({4, 3}), S({4, 3}, 0.5, 0.3), D({1, -1, -1, 1})));
  expect_golden("triplet_margin_loss",
                nn::TripletMarginLoss(nn::TripletMarginLossOptions().margin(0.5).p(1.5))(
                    S({4, 3}), S({4, 3}, 0.5, 0.3), S({4, 3}, 0.8, 0.9)));
  expect_golden(
      "triplet_margin_loss_swap",
      F::triplet_margin_loss(S({4, 3}), S({4, 3}, 0.5, 0.3), S({4, 3}, 0.8, 0.9),
                             F::TripletMarginLossFuncOptions().swap(true).reduction(torch::kNone)));
  expect_golden("poisson_nll_loss", nn::PoissonNLLLoss()(S({6}), S({6}, 0.5, 0.3).abs() * 3));
  expect_golden(
      "poisson_nll_loss_full",
      F::poisson_nll_loss(
          S({6}).abs() + 0.1, S({6}, 0.5, 0.3).abs() * 3,
          F::PoissonNLLLossFuncOptions().log_input(false).full(true).reduction(torch::kSum)));
  expect_golden("multilabel_soft_margin_loss",
                nn::MultiLabelSoftMarginLoss(nn::MultiLabelSoftMarginLossOptions().weight(
                    S({4}, 0.3, 1.1)))(S({3, 4}) * 2, (S({3, 4}, 0.9, 0.2) > 0).to(kDouble)));
  expect_golden("pairwise_distance",
                nn::PairwiseDistance(nn::PairwiseDistanceOptions().p(3).keepdim(true))(
                    S({3, 4}), S({3, 4}, 0.5, 0.3)));
  EXPECT_ERROR("Halving dimension must be even", F::glu(S({2, 5})));
  EXPECT_ERROR("softshrink: lambda must be greater or equal to 0", F::softshrink(S({2}), -1.0));
}

TEST(LibtorchFunctions, ImageModulesMatchPyTorch) {
  namespace F = torch::nn::functional;
  namespace nn = torch::nn;
  expect_golden("pixel_shuffle", F::pixel_shuffle(S({1, 8, 2, 3}), 2));
  expect_golden("pixel_shuffle", nn::PixelShuffle(2)(S({1, 8, 2, 3})));
  expect_golden("pixel_unshuffle", nn::PixelUnshuffle(2)(S({1, 2, 4, 6})));
  Tensor round = F::pixel_unshuffle(F::pixel_shuffle(S({2, 8, 2, 3}), 2), 2);
  EXPECT_TRUE(round.equal(S({2, 8, 2, 3})));
  expect_golden("zero_pad2d", nn::ZeroPad2d(nn::ZeroPad2dOptions({1, 0, 2, 1}))(S({1, 1, 2, 3})));
  expect_golden("constant_pad1d", nn::ConstantPad1d(2, 3.5)(S({1, 2, 3})));
  expect_golden("reflection_pad2d", nn::ReflectionPad2d(1)(S({1, 1, 3, 3})));
  expect_golden("replication_pad1d",
                nn::ReplicationPad1d(nn::ReplicationPad1dOptions({2, 1}))(S({1, 2, 3})));
  expect_golden(
      "upsample_bilinear",
      nn::Upsample(
          nn::UpsampleOptions().scale_factor({2, 2}).mode(torch::kBilinear).align_corners(true))(
          S({1, 1, 2, 3})));
  EXPECT_ERROR("divisible by the square of upscale_factor", F::pixel_shuffle(S({1, 6, 2, 2}), 2));
  EXPECT_ERROR("ExpandingArray: expected 4 values, got 3",
               nn::ZeroPad2dOptions(std::vector<int64_t>{1, 2, 3}));
}

TEST(LibtorchFunctions, PoolingMatchesPyTorch) {
  namespace F = torch::nn::functional;
  expect_golden("max_pool3d", F::max_pool3d(S({1, 2, 4, 5, 5}), F::MaxPool3dFuncOptions(2)));
  expect_golden("max_pool3d_pad_dilation_ceil",
                F::max_pool3d(S({2, 1, 5, 6, 7}), F::MaxPool3dFuncOptions({3, 2, 3})
                                                      .stride({2, 1, 2})
                                                      .padding({1, 0, 1})
                                                      .dilation({1, 2, 1})
                                                      .ceil_mode(true)));
  expect_golden("avg_pool3d", F::avg_pool3d(S({1, 2, 4, 4, 5}), F::AvgPool3dFuncOptions(2)));
  expect_golden("avg_pool3d_pad_ceil",
                F::avg_pool3d(S({1, 1, 5, 5, 6}),
                              F::AvgPool3dFuncOptions(3).stride(2).padding(1).ceil_mode(true)));
  expect_golden(
      "avg_pool3d_exclude_pad",
      F::avg_pool3d(
          S({1, 1, 5, 5, 6}),
          F::AvgPool3dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(
              false)));
  expect_golden("avg_pool3d_divisor",
                F::avg_pool3d(S({1, 1, 4, 4, 4}), F::AvgPool3dFuncOptions(2).divisor_override(3)));
  expect_golden("avg_pool2d_divisor",
                F::avg_pool2d(S({1, 2, 5, 5}),
                              F::AvgPool2dFuncOptions(3).stride(2).padding(1).divisor_override(4)));
  expect_golden("adaptive_avg_pool1d", F::adaptive_avg_pool1d(S({2, 3, 10}), 4));
  expect_golden("adaptive_max_pool1d", F::adaptive_max_pool1d(S({2, 3, 10}), 4));
  expect_golden("adaptive_avg_pool3d", F::adaptive_avg_pool3d(S({1, 2, 5, 6, 7}), {2, 3, 4}));
  expect_golden("adaptive_max_pool3d", F::adaptive_max_pool3d(S({1, 2, 5, 6, 7}), {3, 2, 4}));
  expect_golden("max_pool3d_module",
                torch::nn::MaxPool3d(torch::nn::MaxPool3dOptions(3).stride(2).padding(1))(
                    S({1, 1, 5, 5, 5})));
  expect_golden(
      "avg_pool1d_module",
      torch::nn::AvgPool1d(torch::nn::AvgPool1dOptions(3).stride(2).padding(1).count_include_pad(
          false))(S({1, 2, 7})));
  // The argmax positions of max_pool1d, as MaxPool1d::forward_with_indices gives them.
  auto [y, idx] = torch::nn::MaxPool1d(2)->forward_with_indices(D({1, 5, 2, 7}).view({1, 1, 4}));
  EXPECT_VALUES(y.flatten(), {5, 7});
  EXPECT_VALUES(idx.flatten(), {1, 3});
}

TEST(LibtorchFunctions, AliasesAndSmallCompositesMatchPyTorch) {
  expect_golden("acosh", torch::acosh(S({7}).abs() * 3 + 1));
  expect_golden("asinh", torch::asinh(S({7}) * 40));
  expect_golden("atanh", torch::atanh(S({7}) * 0.9));
  expect_golden("deg2rad", torch::deg2rad(S({5}) * 180));
  expect_golden("rad2deg", torch::rad2deg(S({5})));
  expect_golden("hypot", torch::hypot(S({6}), S({6}, 0.5, 0.3)));
  expect_golden("logaddexp", torch::logaddexp(S({6}) * 800, S({6}, 0.5, 0.3) * 3));
  expect_golden("logaddexp2", torch::logaddexp2(S({6}) * 5, S({6}, 0.5, 0.3) * 3));
  expect_golden("xlogy", torch::xlogy(D({0, 2, 0, 1.5}), D({0, 3, 5, 0.5})));
  expect_golden("logit_eps", torch::logit(S({7}).abs(), 0.1));
  expect_golden("sinc", torch::sinc(D({0, 0.5, -1.5, 2.25})));
  expect_golden("nansum", torch::nansum(D({1, NAN, 2.5, NAN})));
  expect_golden("nanmean", torch::nanmean(D({1, NAN, 2.5, NAN})));
  expect_golden("column_stack", torch::column_stack({S({3}), S({3, 2}, 0.5, 0.3)}));
  expect_golden("fliplr", torch::fliplr(S({2, 3})));
  // The plain aliases are the ops they name.
  Tensor a = S({2, 3}), b = S({2, 3}, 0.5, 0.3);
  EXPECT_TRUE(torch::arccos(a).equal(a.acos()));
  EXPECT_TRUE(torch::arctan2(a, b).equal(a.atan2(b)));
  EXPECT_TRUE(torch::greater_equal(a, b).equal(a.ge(b)));
  EXPECT_TRUE(torch::not_equal(a, b).equal(a.ne(b)));
  EXPECT_TRUE(torch::multiply(a, b).equal(a * b));
  EXPECT_TRUE(torch::subtract(a, b, 2).equal(a - 2 * b));
  EXPECT_TRUE(torch::swapaxes(a, 0, 1).equal(a.t()));
  EXPECT_TRUE(torch::moveaxis(S({2, 3, 4}), 0, 2).equal(S({2, 3, 4}).permute({1, 2, 0})));
  EXPECT_TRUE(torch::concatenate({a, b}, 1).equal(torch::cat({a, b}, 1)));
  EXPECT_TRUE(torch::ravel(a.t()).equal(a.t().contiguous().view({-1})));
  EXPECT_TRUE(torch::flipud(a).equal(a.flip({0})));
  EXPECT_TRUE(torch::fix(D({-1.5, 2.7})).equal(D({-1, 2})));
  EXPECT_SHAPE(torch::atleast_3d(S({4})), {1, 4, 1});
  EXPECT_SHAPE(torch::atleast_2d(torch::tensor(1.0)), {1, 1});
  EXPECT_ERROR("fliplr: expected a tensor of at least 2 dims, got shape [3]",
               torch::fliplr(S({3})));
  EXPECT_ERROR("acosh: expected a floating tensor, got Long", torch::acosh(L({1, 2})));
  EXPECT_ERROR("positive: the + operator on a bool tensor is not supported",
               torch::positive(torch::ones({2}, torch::kBool)));
  EXPECT_ERROR("column_stack: expected a non-empty list of tensors", torch::column_stack({}));
}

TEST(LibtorchFunctions, PoolingBadInputGetsClearErrors) {
  namespace F = torch::nn::functional;
  EXPECT_ERROR("max_pool3d: expected a 4-D or 5-D input, got shape [4, 4, 4]",
               F::max_pool3d(S({4, 4, 4}), F::MaxPool3dFuncOptions(2)));
  EXPECT_ERROR("avg_pool3d: pad should be at most half of kernel size",
               F::avg_pool3d(S({1, 4, 4, 4}), F::AvgPool3dFuncOptions(3).padding(2)));
  EXPECT_ERROR("avg_pool3d: output size is too small for input [1, 2, 2, 2]",
               F::avg_pool3d(S({1, 2, 2, 2}), F::AvgPool3dFuncOptions(3)));
  EXPECT_ERROR(
      "max_pool3d: expected a floating input, got Long",
      F::max_pool3d(L({1, 2, 2, 2, 1, 1, 1, 1}).view({1, 1, 2, 2, 2}), F::MaxPool3dFuncOptions(2)));
  EXPECT_ERROR("avg_pool2d: divisor must be not zero",
               F::avg_pool2d(S({1, 4, 4}), F::AvgPool2dFuncOptions(2).divisor_override(0)));
  EXPECT_ERROR("adaptive_avg_pool3d: output_size must be positive, got [2, 0, 2]",
               F::adaptive_avg_pool3d(S({1, 4, 4, 4}), {2, 0, 2}));
  EXPECT_ERROR("adaptive_max_pool1d: expected a 2-D or 3-D input, got shape [4]",
               F::adaptive_max_pool1d(S({4}), 2));
  EXPECT_ERROR("expected 1 or 3 values, got 2", F::MaxPool3dFuncOptions({2, 2}));
  EXPECT_ERROR(
      "max_pool3d: kernel_size, stride and dilation must be positive and padding "
      "non-negative, got kernel_size=[2, 2, 2], stride=[0, 0, 0]",
      F::max_pool3d(S({1, 1, 4, 4, 4}), F::MaxPool3dFuncOptions(2).stride(0)));
  EXPECT_ERROR("adaptive_avg_pool1d: expected non-empty spatial dims, got shape [2, 0]",
               F::adaptive_avg_pool1d(S({2, 1}).narrow(1, 0, 0), 2));
}

TEST(LibtorchFunctions, SmallNamesAndDeviceQueries) {
  EXPECT_EQ(torch::str("a", 1, '-', 2.5), "a1-2.5");
  torch::optional<int> none = torch::nullopt;
  EXPECT_FALSE(none.has_value());
  torch::ExpandingArray<2> k(3);
  EXPECT_EQ((*k)[0], 3);
  EXPECT_EQ((*k)[1], 3);
  torch::ExpandingArray<3> s({1, 2, 3});
  EXPECT_EQ(IntArrayRef(s).vec(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_ERROR("ExpandingArray: expected 3 values, got 2", torch::ExpandingArray<3>({1, 2}));
  EXPECT_EQ(torch::kF32, kFloat);
  EXPECT_EQ(torch::kI64, kLong);
  EXPECT_ERROR("Expected 1 == 2 to be true, but got false.", [] { TORCH_CHECK(1 == 2); }());
  EXPECT_ERROR("custom 7", [] { TORCH_CHECK(false, "custom ", 7); }());
  // The usual device choice compiles; without a CUDA device it picks the CPU.
  torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  if (torch::cuda::device_count() == 0) {
    EXPECT_EQ(device, torch::Device(torch::kCPU));
    EXPECT_FALSE(torch::cuda::cudnn_is_available());
  }
  torch::cuda::manual_seed_all(1);
  Tensor t = S({3});
  EXPECT_TRUE(t.to(torch::kCPU).equal(t));  // a device type alone is not ambiguous
  EXPECT_EQ(t.to(device).device().type(), device.type());
  EXPECT_TRUE(t.to(device).cpu().equal(t));
  EXPECT_TRUE(t.cpu().equal(t));
}

TEST(LibtorchFunctions, BadInputGetsClearErrors) {
  EXPECT_ERROR("trace: expected a matrix, but got tensor with dim 3", torch::trace(S({2, 2, 2})));
  EXPECT_ERROR("diff: order must be non-negative but got -1", torch::diff(S({3}), -1));
  EXPECT_ERROR("rot90: expected rotation dims to be different", torch::rot90(S({2, 2}), 1, {0, 0}));
  EXPECT_ERROR("diag_embed: diagonal dimensions cannot be identical",
               torch::diag_embed(S({3}), 0, 0, 0));
  EXPECT_ERROR("meshgrid: indexing must be one of \"xy\" or \"ij\"",
               torch::meshgrid({S({2})}, "yx"));
  EXPECT_ERROR("repeat_interleave: repeats can not be negative",
               torch::repeat_interleave(L({1, -1})));
  EXPECT_ERROR("linalg.cross: inputs dimension 1 must have length 3",
               torch::cross(S({2, 2}), S({2, 2}), 1));
  EXPECT_ERROR("cdist only supports at least 2D tensors", torch::cdist(S({3}), S({3})));
  EXPECT_ERROR("X1 and X2 must have the same number of columns",
               torch::cdist(S({2, 3}), S({2, 4})));
  EXPECT_ERROR("index_fill: index 4 is out of bounds for dimension 1 with size 4",
               torch::index_fill(S({3, 4}), 1, L({4}), 0.0));
  EXPECT_ERROR(
      "masked_scatter: expected source to have at least 12 elements",
      torch::masked_scatter(S({3, 4}), ones({3, 4}, TensorOptions().dtype(kBool)), S({5})));
  EXPECT_ERROR("bincount only supports 1-d non-negative integral inputs",
               torch::bincount(L({1, -2})));
  EXPECT_ERROR("histc: expected a floating-point input", torch::histc(L({1, 2})));
  EXPECT_ERROR("side and right can't be set to opposites",
               torch::searchsorted(D({1, 2}), D({1}), false, true, "left"));
  EXPECT_ERROR("first N-1 dimensions of boundaries tensor and input value tensor must match",
               torch::searchsorted(S({2, 3}), S({3, 3})));
  EXPECT_ERROR("median() input tensor cannot be empty", torch::median(zeros({0})));
  EXPECT_ERROR("pad: unknown mode 'wrap'", torch::pad(S({1, 3}), {1, 1}, "wrap"));
  EXPECT_ERROR("reduction: expected 0 (None), 1 (Mean) or 2 (Sum), got 5",
               torch::mse_loss(S({2}), S({2}), 5));
  EXPECT_ERROR("embedding: sparse gradients are not supported",
               torch::embedding(S({3, 2}), L({0}), -1, false, true));
  Tensor b = ones({2}, TensorOptions().dtype(kBool));
  EXPECT_ERROR("index_fill: index must be an integer tensor",
               torch::index_fill(S({3, 4}), 1, D({0}), 0.0));
  EXPECT_ERROR("index_fill: index must be 0-D or 1-D",
               torch::index_fill(S({3, 4}), 1, L({0, 1}).view({1, 2}), 0.0));
  EXPECT_ERROR("index_fill: only supports a 0-dimensional value tensor",
               torch::index_fill(S({3, 4}), 1, L({0}), S({2})));
  EXPECT_ERROR("index_copy: source [1, 3] must be the input's shape [4, 3] with 2 slices",
               torch::index_copy(S({4, 3}), 0, L({0, 1}), S({1, 3})));
  EXPECT_ERROR("diff: expects input to be at least one-dimensional", torch::diff(S({2}).sum()));
  EXPECT_ERROR("diff: expected prepend/append to have 2 dimensions",
               torch::diff(S({2, 2}), 1, -1, S({2})));
  EXPECT_ERROR("rot90: expected total rotation dims == 2", torch::rot90(S({2, 2}), 1, {0}));
  EXPECT_ERROR("rot90: expected total dims >= 2", torch::rot90(S({3})));
  EXPECT_ERROR("diag_embed: expected a tensor of at least one dimension",
               torch::diag_embed(S({2}).sum()));
  EXPECT_ERROR("meshgrid: expects a non-empty TensorList", torch::meshgrid({}));
  EXPECT_ERROR("meshgrid: Expected 0D or 1D tensor", torch::meshgrid({S({2, 2})}));
  EXPECT_ERROR("repeat_interleave: repeats must be 0-dim or 1-dim",
               torch::repeat_interleave(L({1, 1}).view({1, 2})));
  EXPECT_ERROR("repeat_interleave: repeats must be an integer tensor",
               torch::repeat_interleave(D({1})));
  EXPECT_ERROR("repeat_interleave: allocated size does not match required size",
               torch::repeat_interleave(L({1, 2}), std::optional<int64_t>(4)));
  EXPECT_ERROR("repeat_interleave: repeats must have the same size as input along dim",
               torch::repeat_interleave(S({3}), L({1, 2}), 0));
  EXPECT_ERROR("linalg.cross: inputs must have the same number of dimensions",
               torch::linalg_cross(S({3}), S({1, 3})));
  EXPECT_ERROR("cross: no dimension of size 3", torch::cross(S({2, 2}), S({2, 2})));
  EXPECT_ERROR("cdist only supports non-negative p values", torch::cdist(S({2, 3}), S({2, 3}), -1));
  EXPECT_ERROR("cdist only supports floating-point dtypes",
               torch::cdist(L({1, 2}).view({1, 2}), L({1, 2}).view({1, 2})));
  EXPECT_ERROR("masked_scatter: expected BoolTensor for mask",
               torch::masked_scatter(S({2}), L({1, 0}), S({2})));
  EXPECT_ERROR("masked_scatter: expected self and source to have same dtypes",
               torch::masked_scatter(S({2}), b, S({2}).to(kFloat)));
  EXPECT_ERROR("bincount only supports 1-d non-negative integral inputs, got 2-d",
               torch::bincount(L({1, 2}).view({1, 2})));
  EXPECT_ERROR("bincount only supports 1-d non-negative integral inputs, got Double",
               torch::bincount(D({1})));
  EXPECT_ERROR("bincount: minlength should be >= 0", torch::bincount(L({1}), {}, -1));
  EXPECT_ERROR("bincount: weights should be 1-d and have the same length as input",
               torch::bincount(L({1, 2}), S({3})));
  EXPECT_ERROR("histc: bins must be > 0", torch::histc(S({3}), 0));
  EXPECT_ERROR("histc: range of [0, inf] is not finite", torch::histc(S({3}), 10, 0, INFINITY));
  EXPECT_ERROR("side can only be 'left' or 'right' but got middle",
               torch::searchsorted(D({1, 2}), D({1}), false, false, "middle"));
  EXPECT_ERROR("boundaries tensor should have at least 1 dimension",
               torch::searchsorted(D({1}).sum(), D({1})));
  EXPECT_ERROR("sorter must be a long tensor of the boundaries' shape",
               torch::searchsorted(D({1, 2}), D({1}), false, false, std::nullopt, L({0})));
  EXPECT_ERROR("sorter index out of range: 5",
               torch::searchsorted(D({1, 2}), D({1}), false, false, std::nullopt, L({0, 5})));
  EXPECT_ERROR("input value can be a scalar only when boundaries tensor dimension is 1",
               torch::searchsorted(S({2, 2}), Scalar(1.0)));
  EXPECT_ERROR("bucketize: boundaries tensor must be 1 dimension",
               torch::bucketize(D({1}), S({2, 2})));
  EXPECT_ERROR("median(): Expected reduction dim 1 to have non-zero size",
               torch::median(zeros({2, 0}), 1));
  EXPECT_ERROR("pad: padding mode \"reflect\" doesn't take in value argument",
               torch::pad(S({1, 3}), {1, 1}, "reflect", 1.0));
  EXPECT_ERROR("embedding: sparse gradients are not supported (sparse=true)",
               torch::embedding(S({3, 2}), L({0}), -1, false, true));
  namespace F = torch::nn::functional;
  EXPECT_ERROR("celu: alpha must not be 0", F::celu(S({2}), F::CELUFuncOptions().alpha(0)));
  EXPECT_ERROR("glu does not support scalars", F::glu(S({2}).sum()));
  EXPECT_ERROR("soft_margin_loss: input [2] and target [3] must have the same shape",
               F::soft_margin_loss(S({2}), S({3})));
  EXPECT_ERROR("cosine_embedding_loss: the inputs [2, 3] and [2, 2] must have the same shape",
               F::cosine_embedding_loss(S({2, 3}), S({2, 2}), D({1, 1})));
  EXPECT_ERROR("multilabel_soft_margin_loss: expected input and target of one shape [N, C]",
               F::multilabel_soft_margin_loss(S({2, 3}), S({3})));
  EXPECT_ERROR("pixel_shuffle expects input to have at least 3 dimensions",
               F::pixel_shuffle(S({4, 2}), 2));
  EXPECT_ERROR("pixel_shuffle expects a positive upscale_factor",
               F::pixel_shuffle(S({4, 2, 2}), 0));
  EXPECT_ERROR("pixel_unshuffle expects input to have at least 3 dimensions",
               F::pixel_unshuffle(S({4, 2}), 2));
  EXPECT_ERROR("pixel_unshuffle expects a positive downscale_factor",
               F::pixel_unshuffle(S({1, 2, 2}), -1));
  EXPECT_ERROR("pixel_unshuffle expects height and width to be divisible by downscale_factor",
               F::pixel_unshuffle(S({1, 3, 2}), 2));
}

}  // namespace
