// Fold/Unfold, LPPool, MaxUnpool and LocalResponseNorm (nn/window_modules.h),
// Softmax2d and RReLU (nn/activations.h), the 3-d padding modules, the
// margin losses (nn/loss_modules.h) and the top-level nn spellings
// (nn/aten_functions.h) against PyTorch's outputs; their error paths.
// Gradients are in the gradcheck table.
#include <brasa/autograd/gradcheck.h>
#include <brasa/torch.h>

#include <cmath>
#include <sstream>

#include "../ops/golden_util.h"
#include "../test_util.h"

namespace {

using namespace brasa;
namespace F = torch::nn::functional;
using brasa::testing::printed;
using golden::expect_golden;
using golden::L;
using golden::S;
using golden::set_sequential_weights;

TEST(WindowModules, MatchPyTorch) {
  expect_golden(
      "unfold",
      F::unfold(S({2, 2, 4, 5}),
                F::UnfoldFuncOptions({2, 3}).dilation({1, 2}).padding({1, 0}).stride({2, 1})));
  expect_golden(
      "fold",
      F::fold(S({2, 8, 9}),
              F::FoldFuncOptions({4, 5}, {2, 2}).dilation({1, 2}).padding({1, 0}).stride({2, 1})));
  expect_golden("lp_pool1d",
                F::lp_pool1d(S({1, 2, 7}), F::LPPool1dFuncOptions(3, 2).ceil_mode(true)));
  expect_golden("lp_pool2d", F::lp_pool2d(S({1, 2, 4, 5}).abs(),
                                          F::LPPool2dFuncOptions(1.5, {2, 3}).stride({1, 2})));
  auto [pooled, idx] = F::max_pool2d_with_indices(S({1, 2, 4, 4}), F::MaxPool2dFuncOptions(2));
  expect_golden("max_unpool2d", F::max_unpool2d(pooled, idx, F::MaxUnpool2dFuncOptions(2)));
  auto [p1, i1] = F::max_pool1d_with_indices(S({1, 1, 7}), F::MaxPool1dFuncOptions(2));
  expect_golden(
      "max_unpool1d_size",
      F::max_unpool1d(p1, i1, F::MaxUnpool1dFuncOptions(2).output_size(std::vector<int64_t>{7})));
  expect_golden("local_response_norm_3d",
                F::local_response_norm(
                    S({2, 5, 3}), F::LocalResponseNormFuncOptions(3).alpha(0.2).beta(0.6).k(2)));
  expect_golden("local_response_norm_4d", F::local_response_norm(S({1, 4, 2, 3}), 2));
  expect_golden("softmax2d", torch::nn::Softmax2d()(S({2, 3, 2, 2})));
  torch::nn::RReLU rrelu(torch::nn::RReLUOptions().lower(0.1).upper(0.3));
  rrelu->eval();
  expect_golden("rrelu_eval", rrelu(S({7})));
  expect_golden("reflection_pad3d", torch::nn::ReflectionPad3d(1)(S({1, 1, 2, 3, 3})));
  expect_golden("replication_pad3d", torch::nn::ReplicationPad3d(torch::nn::ReplicationPad3dOptions(
                                         {1, 0, 2, 1, 0, 1}))(S({1, 2, 2, 2, 2})));
}

TEST(WindowModules, FoldInvertsUnfoldUpToOverlapCountsAndModulesPrint) {
  Tensor x = torch::randn({2, 3, 6, 7});
  auto unfold_opts = F::UnfoldFuncOptions(2).stride(2);
  Tensor cols = F::unfold(x, unfold_opts);
  EXPECT_SHAPE(cols, {2, 12, 9});
  // Non-overlapping windows: fold(unfold(x)) gives x back where windows cover it.
  Tensor back = F::fold(cols, F::FoldFuncOptions({6, 7}, 2).stride(2));
  EXPECT_TRUE(back.narrow(3, 0, 6).allclose(x.narrow(3, 0, 6)));
  EXPECT_TRUE(back.select(3, 6).eq(0).all().item<bool>());
  torch::nn::Unfold unfold(torch::nn::UnfoldOptions({2, 3}).padding(1));
  EXPECT_SHAPE(unfold(torch::ones({3, 4, 4})), {18, 20});  // unbatched
  EXPECT_EQ(
      printed(*unfold),
      "torch::nn::Unfold(kernel_size=[2, 3], dilation=[1, 1], padding=[1, 1], stride=[1, 1])");
  EXPECT_EQ(printed(*torch::nn::Fold(torch::nn::FoldOptions({4, 5}, {2, 2}))),
            "torch::nn::Fold(output_size=[4, 5], kernel_size=[2, 2], dilation=[1, 1], "
            "padding=[0, 0], stride=[1, 1])");
  EXPECT_EQ(printed(*torch::nn::LPPool2d(torch::nn::LPPool2dOptions(2, 3).stride(2))),
            "torch::nn::LPPool2d(norm_type=2, kernel_size=[3, 3], stride=[2, 2], ceil_mode=false)");
  EXPECT_EQ(printed(*torch::nn::MaxUnpool2d(torch::nn::MaxUnpool2dOptions(2))),
            "torch::nn::MaxUnpool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0])");
  EXPECT_EQ(printed(*torch::nn::LocalResponseNorm(2)),
            "torch::nn::LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1)");
  EXPECT_EQ(printed(*torch::nn::RReLU()), "torch::nn::RReLU(lower=0.125, upper=0.333333)");
  EXPECT_EQ(printed(*torch::nn::Softmax2d()), "torch::nn::Softmax2d()");
  torch::nn::MaxUnpool3d unpool(torch::nn::MaxUnpool3dOptions(2));
  // Each pooled value goes back to the window corner its index names.
  std::vector<int64_t> corners;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 2; ++k) corners.push_back(2 * i * 16 + 2 * j * 4 + 2 * k);
  Tensor i3 = torch::tensor(corners).view({1, 1, 2, 2, 2});
  Tensor up = unpool(torch::ones({1, 1, 2, 2, 2}), i3);
  EXPECT_SHAPE(up, {1, 1, 4, 4, 4});
  EXPECT_EQ(up.sum().item<float>(), 8.0f);
  EXPECT_EQ(up[0][0][2][2][2].item<float>(), 1.0f);
  torch::nn::CrossMapLRN2d lrn(torch::nn::CrossMapLRN2dOptions(3));
  Tensor img = torch::randn({2, 5, 3, 3});
  EXPECT_TRUE(lrn(img).allclose(F::local_response_norm(img, 3)));
  // RReLU while training draws slopes in [lower, upper] for negative inputs.
  torch::nn::RReLU train_rrelu(torch::nn::RReLUOptions().lower(0.2).upper(0.4));
  Tensor neg = -torch::rand({1000}) - 0.1;
  Tensor slope = train_rrelu(neg) / neg;
  EXPECT_GE(slope.min().item<float>(), 0.2f - 1e-6f);
  EXPECT_LE(slope.max().item<float>(), 0.4f + 1e-6f);
  EXPECT_GT(slope.std().item<float>(), 0.01f);
}

TEST(WindowModules, BadInputGetsClearErrors) {
  EXPECT_ERROR("expected 3D or 4D (batch mode) tensor",
               F::unfold(S({4, 4}), F::UnfoldFuncOptions(2)));
  EXPECT_ERROR("kernel_size should be greater than zero",
               F::unfold(S({1, 1, 4, 4}), F::UnfoldFuncOptions(0)));
  EXPECT_ERROR("non-positive", F::unfold(S({1, 1, 2, 2}), F::UnfoldFuncOptions(3)));
  EXPECT_ERROR("the calculated number of sliding blocks 3 * 4 = 12, but got input.size(2)=11",
               F::fold(S({1, 4, 11}), F::FoldFuncOptions({4, 5}, 2)));
  EXPECT_ERROR("divisible by the product of kernel_size",
               F::fold(S({1, 5, 12}), F::FoldFuncOptions({4, 5}, 2)));
  EXPECT_ERROR("expected int64 indices of the input's shape",
               F::max_unpool2d(S({1, 1, 2, 2}), L({0, 1}), F::MaxUnpool2dFuncOptions(2)));
  EXPECT_ERROR(
      "found an invalid max index 16",
      F::max_unpool2d(S({1, 1, 1, 1}), L({16}).view({1, 1, 1, 1}),
                      F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{4, 4})));
  EXPECT_ERROR("Expected 3D or higher dimensionality input", F::local_response_norm(S({2, 3}), 2));
  EXPECT_ERROR("Softmax2d: expected input to be 3D or 4D", torch::nn::Softmax2d()(S({2, 3})));
  EXPECT_ERROR("lower bound (0.5) must be less than or equal to upper bound (0.1)",
               F::rrelu(S({3}), F::RReLUFuncOptions().lower(0.5).upper(0.1)));
}

TEST(GumbelSoftmax, SamplesTheCategoricalAndIsStraightThroughWhenHard) {
  torch::manual_seed(2);
  Tensor logits = torch::log(torch::tensor(std::vector<double>{0.1, 0.2, 0.7}, kDouble));
  Tensor draws =
      F::gumbel_softmax(logits.expand({20000, 3}), F::GumbelSoftmaxFuncOptions().hard(true));
  // hard samples are one-hot with the categorical's frequencies.
  EXPECT_TRUE(draws.sum(1).eq(1).all().item<bool>());
  Tensor freq = draws.mean(0);
  EXPECT_NEAR(freq[0].item<double>(), 0.1, 0.01);
  EXPECT_NEAR(freq[2].item<double>(), 0.7, 0.015);
  Tensor soft = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5));
  EXPECT_NEAR(soft.sum().item<double>(), 1.0, 1e-12);
  Tensor l = logits.clone().requires_grad_();
  (F::gumbel_softmax(l, F::GumbelSoftmaxFuncOptions().hard(true)) * torch::arange(3, kDouble))
      .sum()
      .backward();
  EXPECT_TRUE(l.grad().defined() && l.grad().abs().sum().item<double>() > 0);
  EXPECT_ERROR("tau must be positive",
               F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0)));
}

TEST(MarginLosses, MatchPyTorch) {
  expect_golden("multi_margin_loss",
                F::multi_margin_loss(
                    S({3, 4}), L({1, 0, 3}),
                    F::MultiMarginLossFuncOptions().margin(0.7).weight(S({4}, 0.3, 1.1).abs())));
  expect_golden("multi_margin_loss_p2",
                F::multi_margin_loss(S({3, 4}), L({2, 2, 0}),
                                     F::MultiMarginLossFuncOptions().p(2).reduction(torch::kNone)));
  expect_golden("multilabel_margin_loss",
                F::multilabel_margin_loss(S({2, 4}), L({3, 0, -1, 1, 1, 2, 0, 3}).view({2, 4}),
                                          F::MultilabelMarginLossFuncOptions(torch::kNone)));
  expect_golden("triplet_margin_with_distance_loss",
                torch::nn::TripletMarginWithDistanceLoss(
                    torch::nn::TripletMarginWithDistanceLossOptions().margin(0.5).swap(true))(
                    S({4, 3}), S({4, 3}, 0.5, 0.3), S({4, 3}, 0.8, 0.9)));
  auto cosine_distance = [](const Tensor& a, const Tensor& b) {
    return 1 - F::cosine_similarity(a, b, F::CosineSimilarityFuncOptions());
  };
  expect_golden(
      "triplet_margin_with_cosine_distance",
      F::triplet_margin_with_distance_loss(S({4, 3}), S({4, 3}, 0.5, 0.3), S({4, 3}, 0.8, 0.9),
                                           F::TripletMarginWithDistanceLossFuncOptions()
                                               .distance_function(cosine_distance)
                                               .reduction(torch::kSum)));
  torch::nn::MultiMarginLoss loss;
  EXPECT_NEAR(loss(S({3, 4}), L({1, 0, 3})).item<double>(),
              F::multi_margin_loss(S({3, 4}), L({1, 0, 3})).item<double>(), 1e-12);
  EXPECT_ERROR("only p == 1 and p == 2 supported",
               F::multi_margin_loss(S({3, 4}), L({1, 0, 3}), F::MultiMarginLossFuncOptions().p(3)));
  EXPECT_ERROR("inconsistent target size", F::multi_margin_loss(S({3, 4}), L({1, 0})));
  EXPECT_ERROR("target 7 is out of range for 4 classes",
               F::multilabel_margin_loss(S({1, 4}), L({7, -1, 0, 0}).view({1, 4})));
  EXPECT_ERROR(
      "expected margin to be greater than 0",
      F::triplet_margin_with_distance_loss(
          S({2}), S({2}), S({2}), F::TripletMarginWithDistanceLossFuncOptions().margin(0)));
}

TEST(AtenSpellings, MatchPyTorch) {
  expect_golden("channel_shuffle", torch::channel_shuffle(S({1, 6, 2}), 3));
  expect_golden("prelu_channels", torch::prelu(S({2, 3, 2}), golden::D({0.1, 0.2, 0.3})));
  expect_golden("bilinear_lead_dims", torch::bilinear(S({2, 2, 3}), S({2, 2, 4}, 0.5, 0.3),
                                                      S({5, 3, 4}, 0.7, 0.1), S({5}, 0.3, 0.4)));
  expect_golden("pdist_p2", torch::pdist(S({4, 3})));
  expect_golden("pdist_p1", torch::pdist(S({4, 3}), 1.0));
  expect_golden("max_pool1d_top", torch::max_pool1d(S({1, 2, 7}), 3, 2, 1));
  expect_golden("avg_pool1d_top", torch::avg_pool1d(S({1, 2, 7}), 3, 2, 1, true, false));
  expect_golden("convolution_2d",
                torch::convolution(S({1, 2, 5, 5}), S({3, 2, 3, 3}, 0.5, 0.3), S({3}, 0.3, 0.4),
                                   {2, 1}, {1, 0}, {1, 1}, false, {0, 0}, 1));
  expect_golden("convolution_transposed_1d",
                torch::convolution(S({1, 2, 5}), S({2, 3, 3}, 0.5, 0.3), std::nullopt, {2}, {1},
                                   {1}, true, {1}, 1));
  Tensor x = S({4, 3}), y = S({4, 3}, 0.5, 0.3);
  Tensor sign = golden::D({1, -1, 1, -1});
  EXPECT_TRUE(torch::margin_ranking_loss(x.select(1, 0), y.select(1, 0), sign, 0.2)
                  .allclose(F::margin_ranking_loss(x.select(1, 0), y.select(1, 0), sign,
                                                   F::MarginRankingLossFuncOptions().margin(0.2))));
  EXPECT_TRUE(
      torch::hinge_embedding_loss(x, torch::ones({4, 3}, kDouble), 1.0, torch::Reduction::Sum)
          .allclose(x.sum()));
  EXPECT_TRUE(
      torch::cosine_embedding_loss(x, y, sign).allclose(F::cosine_embedding_loss(x, y, sign)));
  EXPECT_TRUE(torch::triplet_margin_loss(x, y, x.flip({0}))
                  .allclose(F::triplet_margin_loss(x, y, x.flip({0}))));
  EXPECT_TRUE(torch::poisson_nll_loss(x, y.abs(), true, false, 1e-8, 1)
                  .allclose(F::poisson_nll_loss(x, y.abs())));
  EXPECT_TRUE(torch::pairwise_distance(x, y).allclose(F::pairwise_distance(x, y)));
  EXPECT_TRUE(torch::celu(x, 0.5).allclose(F::celu(x, F::CELUFuncOptions().alpha(0.5))));
  EXPECT_TRUE(torch::hardshrink(x, 0.3).allclose(F::hardshrink(x, 0.3)));
  EXPECT_SHAPE(torch::pixel_shuffle(torch::ones({1, 4, 2, 2}), 2), {1, 1, 4, 4});
  EXPECT_SHAPE(torch::pixel_unshuffle(torch::ones({1, 1, 4, 4}), 2), {1, 4, 2, 2});
  EXPECT_SHAPE(torch::adaptive_avg_pool1d(torch::ones({1, 2, 9}), {3}), {1, 2, 3});
  EXPECT_SHAPE(torch::max_pool3d(torch::ones({1, 1, 4, 4, 4}), {2}), {1, 1, 2, 2, 2});
  auto [v, i] = torch::max_pool1d_with_indices(S({1, 1, 6}), {2});
  EXPECT_TRUE(v.equal(std::get<0>(S({1, 1, 6}).view({1, 1, 3, 2}).max(3))));
  EXPECT_ERROR("Number of channels must be divisible by groups",
               torch::channel_shuffle(S({1, 5, 2}), 2));
  EXPECT_ERROR("pdist only supports 2D tensors", torch::pdist(S({3})));
  EXPECT_ERROR("prelu: 2 parameters need an input with that many channels",
               torch::prelu(S({2, 3}), golden::D({0.1, 0.2})));
  EXPECT_ERROR("transposed convolutions of 3 spatial dims are not supported",
               torch::convolution(S({1, 1, 2, 2, 2}), S({1, 1, 1, 1, 1}), std::nullopt, {1}, {0},
                                  {1}, true, {0}, 1));
}

}  // namespace

namespace {

// The fused float kernel against the composite in double: values and both
// gradients, per channel (with rows longer than the kernel's 16 lanes and
// a remainder) and with one slope.
TEST(AtenSpellings, PreluFusedKernelMatchesTheComposite) {
  for (const bool per_channel : {true, false}) {
    Tensor x = (S({3, 4, 37}, 0.83, 0.1) * 2).to(kFloat).requires_grad_();
    Tensor w = (per_channel ? golden::D({0.1, -0.2, 0.3, 0.25}) : golden::D({0.2}))
                   .to(kFloat)
                   .requires_grad_();
    Tensor g = S({3, 4, 37}, 0.57, 0.3).to(kFloat);
    Tensor y = torch::prelu(x, w);
    y.backward(g);
    Tensor xd = x.detach().to(kDouble), wd = w.detach().to(kDouble), gd = g.to(kDouble);
    Tensor a = per_channel ? wd.view({1, 4, 1}) : wd;
    Tensor positive = xd > 0;
    EXPECT_TRUE(allclose(y.to(kDouble), where(positive, xd, xd * a), 1e-6, 1e-7));
    EXPECT_TRUE(allclose(x.grad().to(kDouble), where(positive, gd, gd * a), 1e-6, 1e-7));
    Tensor gw = where(positive, zeros_like(xd), gd * xd);
    gw = per_channel ? gw.sum({0, 2}) : gw.sum().reshape({1});
    EXPECT_TRUE(allclose(w.grad().to(kDouble), gw, 1e-5, 1e-5)) << w.grad() << gw;
  }
}

// The fused local response norm (any window size, odd, even or wider than
// the channels; 3-d to 5-d inputs) against the definition computed element
// by element in double, its float gradient against the double one, and the
// double one (and the composite double backward) by finite differences.
TEST(WindowModules, LocalResponseNormFusedKernelMatchesTheDefinition) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t size;
    double alpha, beta, k;
  };
  const Case cases[] = {{{3, 7, 4, 5}, 5, 1e-2, 0.75, 2},
                        {{2, 6, 2, 3, 2}, 2, 0.3, 0.5, 1},
                        {{2, 5, 9}, 9, 0.2, 1.3, 1.5},
                        {{1, 3, 4}, 1, 0.5, 0.75, 1},
                        // Enough rows that 2 threads split them.
                        {{4, 16, 12, 12}, 3, 0.1, 0.75, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "shape " << IntArrayRef(c.shape) << " size " << c.size);
    const auto opts = F::LocalResponseNormFuncOptions(c.size).alpha(c.alpha).beta(c.beta).k(c.k);
    Tensor xd = S(c.shape, 0.61, 0.2) * 3;
    const int64_t N = c.shape[0], C = c.shape[1], rest = xd.numel() / (N * C);
    // The definition, channel by channel: the window's squares summed.
    Tensor flat = xd.reshape({N, C, rest}), sums = zeros_like(flat);
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t j = ch - c.size / 2; j <= ch + (c.size - 1) / 2; ++j)
        if (j >= 0 && j < C) sums.select(1, ch).add_(flat.select(1, j).pow(2));
    Tensor want = flat * (sums * (c.alpha / c.size) + c.k).pow(-c.beta);
    Tensor x = xd.to(kFloat).requires_grad_();
    Tensor y = F::local_response_norm(x, opts);
    EXPECT_TRUE(allclose(y.to(kDouble), want.view(c.shape), 1e-5, 1e-6));
    Tensor g = S(c.shape, 0.37, 0.4);
    y.backward(g.to(kFloat));
    Tensor xr = xd.clone().requires_grad_();
    Tensor yd = F::local_response_norm(xr, opts);
    EXPECT_TRUE(allclose(yd, want.view(c.shape), 1e-12, 1e-12));
    yd.backward(g);
    EXPECT_TRUE(allclose(x.grad().to(kDouble), xr.grad(), 1e-4, 1e-5));
    auto fn = [&](const autograd::variable_list& v) {
      return autograd::variable_list{F::local_response_norm(v[0], opts)};
    };
    if (xd.numel() > 500) continue;  // finite differences on the small cases
    EXPECT_TRUE(autograd::gradcheck(fn, {xd.clone().requires_grad_()}));
    EXPECT_TRUE(autograd::gradgradcheck(fn, {xd.clone().requires_grad_()}));
  }
}

// The ATen top-level spellings of nn functions (torch::adaptive_avg_pool2d
// as libtorch's ResNet code calls it, torch::linear, the padding ops, ...)
// give what their nn::functional forms give.
TEST(AtenSpellings, TopLevelNnFunctionsMatchTheFunctionalForms) {
  Tensor x = S({2, 3, 5, 6});
  EXPECT_TRUE(equal(torch::adaptive_avg_pool2d(x, {1, 1}), x.mean({2, 3}, true)));
  Tensor v = S({1, 2, 4, 4, 4});
  EXPECT_TRUE(equal(torch::adaptive_avg_pool3d(v, {2, 2, 2}),
                    F::adaptive_avg_pool3d(v, F::AdaptiveAvgPool3dFuncOptions({2, 2, 2}))));
  EXPECT_TRUE(
      equal(torch::avg_pool3d(v, {2, 2, 2}), F::avg_pool3d(v, F::AvgPool3dFuncOptions({2, 2, 2}))));
  EXPECT_TRUE(allclose(torch::avg_pool3d(v, {2, 2, 2}, {}, 0, false, true, 1),
                       F::avg_pool3d(v, F::AvgPool3dFuncOptions({2, 2, 2})) * 8));
  Tensor w = S({4, 6}), b = S({4});
  EXPECT_TRUE(allclose(torch::linear(x, w, b), torch::matmul(x, w.t()) + b));
  EXPECT_TRUE(allclose(torch::linear(x, w), torch::matmul(x, w.t())));
  EXPECT_TRUE(equal(torch::one_hot(torch::tensor({0, 2}, torch::kLong), 3),
                    torch::tensor({1, 0, 0, 0, 0, 1}, torch::kLong).view({2, 3})));
  Tensor y = S({2, 6}) * 10;
  EXPECT_TRUE(equal(torch::relu6(y), y.clamp(0, 6)));
  EXPECT_TRUE(allclose(torch::log_sigmoid(y), torch::log(torch::sigmoid(y))));
  EXPECT_TRUE(allclose(torch::glu(y), y.slice(1, 0, 3) * torch::sigmoid(y.slice(1, 3))));
  EXPECT_TRUE(allclose(torch::glu(y, 0), y[0].unsqueeze(0) * torch::sigmoid(y[1].unsqueeze(0))));
  EXPECT_TRUE(equal(torch::softshrink(y, 2), F::softshrink(y, F::SoftshrinkFuncOptions(2))));
  const auto reflect = [](std::vector<int64_t> p) {
    return F::PadFuncOptions(p).mode(torch::kReflect);
  };
  const auto replicate = [](std::vector<int64_t> p) {
    return F::PadFuncOptions(p).mode(torch::kReplicate);
  };
  EXPECT_TRUE(equal(torch::reflection_pad2d(x, {1, 2, 2, 1}), F::pad(x, reflect({1, 2, 2, 1}))));
  EXPECT_TRUE(equal(torch::reflection_pad1d(y.unsqueeze(0), {2, 1}),
                    F::pad(y.unsqueeze(0), reflect({2, 1}))));
  EXPECT_TRUE(equal(torch::replication_pad2d(x, {0, 3, 1, 0}), F::pad(x, replicate({0, 3, 1, 0}))));
  EXPECT_TRUE(equal(torch::replication_pad3d(v, {1, 1, 1, 1, 1, 1}),
                    F::pad(v, replicate({1, 1, 1, 1, 1, 1}))));
  EXPECT_EQ(torch::reflection_pad3d(v, {1, 0, 0, 1, 1, 1}).sizes(), IntArrayRef({1, 2, 6, 5, 5}));
  EXPECT_EQ(torch::replication_pad1d(y.unsqueeze(0), {3, 0}).sizes(), IntArrayRef({1, 2, 9}));
  EXPECT_ERROR("reflection_pad2d: padding size is expected to be 4, but got: 2",
               torch::reflection_pad2d(x, {1, 1}));
  Tensor cols = torch::im2col(x, {2, 3}, {1, 1}, {1, 0}, {2, 1});
  EXPECT_TRUE(
      equal(cols, F::unfold(x, F::UnfoldFuncOptions({2, 3}).padding({1, 0}).stride({2, 1}))));
  EXPECT_TRUE(
      equal(torch::col2im(cols, {5, 6}, {2, 3}, {1, 1}, {1, 0}, {2, 1}),
            F::fold(cols, F::FoldFuncOptions({5, 6}, {2, 3}).padding({1, 0}).stride({2, 1}))));
}

// at::upsample_*: the output size given, and scales (output over input)
// that set the sampled positions where they differ from the sizes' ratio.
TEST(AtenSpellings, UpsampleMatchesPyTorch) {
  expect_golden("upsample_nearest1d_scale", torch::upsample_nearest1d(S({2, 3, 4}), {7}, 1.5));
  expect_golden("upsample_nearest2d", torch::upsample_nearest2d(S({1, 2, 3, 4}), {5, 7}));
  expect_golden("upsample_nearest2d_scales",
                torch::upsample_nearest2d(S({1, 2, 3, 4}), {5, 7}, 1.5, 2.0));
  expect_golden("upsample_nearest3d", torch::upsample_nearest3d(S({1, 1, 2, 3, 4}), {3, 5, 7}));
  expect_golden("upsample_linear1d_align", torch::upsample_linear1d(S({2, 3, 4}), {7}, true));
  expect_golden("upsample_linear1d_scale", torch::upsample_linear1d(S({2, 3, 4}), {7}, false, 1.5));
  expect_golden("upsample_bilinear2d_scales",
                torch::upsample_bilinear2d(S({1, 2, 3, 4}), {5, 7}, false, 1.5, 2.0));
  // The same resizing as F::interpolate's bicubic golden.
  expect_golden("interp_bicubic_align", torch::upsample_bicubic2d(S({1, 2, 3, 4}), {5, 7}, true));
  expect_golden("upsample_bicubic2d_scales",
                torch::upsample_bicubic2d(S({1, 2, 3, 4}), {5, 7}, false, 1.5, 2.0));
  expect_golden("upsample_trilinear3d_scales",
                torch::upsample_trilinear3d(S({1, 1, 2, 3, 4}), {3, 5, 7}, false, 2.0, 1.5, 2.0));
  // Without scales: F::interpolate to the same size.
  Tensor x = S({2, 3, 4, 5});
  EXPECT_TRUE(torch::allclose(torch::upsample_bilinear2d(x, {7, 3}, false),
                              F::interpolate(x, F::InterpolateFuncOptions()
                                                    .size(std::vector<int64_t>{7, 3})
                                                    .mode(torch::kBilinear)
                                                    .align_corners(false))));
  // Differentiable, as interpolate.
  Tensor v = S({1, 1, 3, 4}).requires_grad_();
  torch::upsample_bicubic2d(v, {6, 8}, true).sum().backward();
  EXPECT_TRUE(v.grad().defined());
  EXPECT_ERROR("upsample_bilinear2d: It is expected output_size equals to 2, but got size 1",
               torch::upsample_bilinear2d(x, {7}, false));
  EXPECT_ERROR(
      "upsample_bilinear2d: Non-empty 4D data tensor expected but got a tensor with "
      "sizes [2, 3, 4]",
      torch::upsample_bilinear2d(S({2, 3, 4}), {7, 3}, false));
  EXPECT_ERROR("upsample_nearest2d: Input and output sizes should be greater than 0",
               torch::upsample_nearest2d(x, {0, 3}));
  EXPECT_ERROR("upsample_linear1d: expected a floating-point input, got Long",
               torch::upsample_linear1d(L({1, 2, 3}).view({1, 1, 3}), {5}, false));
}

}  // namespace
