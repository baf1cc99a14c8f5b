// Statistics, sets, windows and samplers (ops/statistics.h, nanmedian and
// cummax/cummin in ops/counting.h, binomial/poisson in ops/random.h, the
// bit shifts in ops/math_extra.h) against PyTorch's outputs; their error
// paths. Gradients are in the gradcheck table.
#include <brasa/torch.h>

#include <cmath>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;
using golden::D;
using golden::expect_golden;
using golden::L;
using golden::S;

TEST(Statistics, OrderStatisticsMatchPyTorch) {
  const double nan = NAN;
  expect_golden("nanmedian_dim",
                std::get<0>(torch::nanmedian(
                    D({1, nan, 3, 2, nan, nan, nan, nan, 4, 1, nan, 2}).view({3, 4}), 1)));
  EXPECT_EQ(torch::nanmedian(D({nan, 2, 1, 3})).item<double>(), 2.0);
  auto [mx, mi] = torch::cummax(D({1, 3, 3, 2, nan, 5}), 0);
  expect_golden("cummax_values", mx);
  expect_golden("cummax_indices", mi);
  expect_golden("cummin_indices", std::get<1>(torch::cummin(S({3, 4}), 1)));
  auto [lo, hi] = torch::aminmax(S({3, 4}), 1);
  EXPECT_TRUE(lo.equal(std::get<0>(S({3, 4}).min(1))) && hi.equal(std::get<0>(S({3, 4}).max(1))));
  auto [alo, ahi] = torch::aminmax(S({3, 4}), std::nullopt, true);
  EXPECT_SHAPE(alo, {1, 1});
  EXPECT_EQ(ahi.item<double>(), S({3, 4}).max().item<double>());
  EXPECT_TRUE(torch::argwhere(L({0, 3, 0, 1}).view({2, 2})).equal(L({0, 1, 1, 1}).view({2, 2})));
  expect_golden("quantile_linear", torch::quantile(S({3, 5}), D({0.1, 0.5, 0.9}), 1, true));
  expect_golden("quantile_all", torch::quantile(S({3, 5}), 0.3));
  expect_golden("quantile_lower", torch::quantile(S({3, 5}), 0.3, 0, false, "lower"));
  expect_golden("quantile_higher", torch::quantile(S({3, 5}), 0.3, 0, false, "higher"));
  expect_golden("quantile_midpoint", torch::quantile(S({3, 5}), 0.3, 0, false, "midpoint"));
  expect_golden("quantile_nearest",
                torch::quantile(S({4, 5}), D({0.25, 0.5}), 1, false, "nearest"));
  expect_golden("nanquantile",
                torch::nanquantile(D({1, nan, 3, 2, nan, nan, nan, nan}).view({2, 4}), 0.4, 1));
  EXPECT_TRUE(std::isnan(torch::quantile(D({1, nan, 3}), 0.5).item<double>()));
}

TEST(Statistics, SetsCovarianceIntegralsAndHistogramsMatchPyTorch) {
  expect_golden("isin", torch::isin(L({1, 5, 2, 7, 2}), L({2, 7, 9})));
  EXPECT_VALUES(torch::isin(L({1, 5}), L({5}), false, true).to(kLong), {1, 0});
  EXPECT_VALUES(torch::isin(D({1.5, 2}), 2).to(kLong), {0, 1});
  EXPECT_VALUES(torch::isin(L({1, 2}), L({})).to(kLong), {0, 0});
  auto [u, inv, counts] = torch::unique_consecutive(L({1, 1, 2, 2, 3, 1, 1, 2}), true, true);
  expect_golden("unique_consecutive_out", u);
  expect_golden("unique_consecutive_inverse", inv);
  expect_golden("unique_consecutive_counts", counts);
  expect_golden("unique_consecutive_dim",
                std::get<0>(torch::unique_consecutive(D({1, 1, 2, 2, 3, 3, 4, 5}).view({2, 4}),
                                                      false, false, 1)));
  expect_golden("cov", torch::cov(S({3, 6})));
  expect_golden("cov_weights", torch::cov(S({3, 6}), 0, L({1, 2, 1, 3, 1, 1}), S({6}).abs() + 0.1));
  expect_golden("corrcoef", torch::corrcoef(S({3, 6})));
  Tensor x = D({0, 0.5, 1.5, 2, 4});
  expect_golden("trapezoid_x", torch::trapezoid(S({2, 5}), x));
  expect_golden("trapezoid_dx", torch::trapezoid(S({2, 5}), 0.3, 0));
  EXPECT_TRUE(torch::trapz(S({2, 5}), x).allclose(torch::trapezoid(S({2, 5}), x)));
  expect_golden("cumulative_trapezoid", torch::cumulative_trapezoid(S({2, 5}), x));
  expect_golden("histogram_hist",
                std::get<0>(torch::histogram(S({20}), 4, std::nullopt, S({20}, 0.2, 0.4).abs())));
  expect_golden("histogram_edges", std::get<1>(torch::histogram(S({20}), 4)));
  expect_golden("histogram_density",
                std::get<0>(torch::histogram(S({20}), D({-1, -0.2, 0.3, 1}), std::nullopt, true)));
  expect_golden("put", torch::put(S({2, 3}), L({5, 0, -1}), D({10, 20, 30}), true));
  expect_golden("norm_except_dim", torch::norm_except_dim(S({3, 4}), 2, 1));
  EXPECT_TRUE(torch::view_copy(S({2, 3}), {3, 2}).equal(S({2, 3}).view({3, 2})));
}

TEST(Statistics, UniqueDimMatchesPyTorch) {
  Tensor x = golden::L({1, 2, 1, 3, 2, 0, 5, 0, 5, 5, 2, 2, 2, 2, 2}).view({3, 5});
  auto [values, inverse, counts] = torch::unique_dim(x, 1, true, true, true);
  expect_golden("unique_dim_values", values);
  expect_golden("unique_dim_inverse", inverse);
  expect_golden("unique_dim_counts", counts);
  // Every column is its unique column.
  EXPECT_TRUE(torch::index_select(values, 1, inverse).equal(x));
  Tensor rows = golden::D({0.5, -1.0, 0.5, -2.0, -3.0, 7.0, 0.5, -1.0}).view({4, 2});
  expect_golden("unique_dim_float_rows", std::get<0>(torch::unique_dim(rows, 0)));
  EXPECT_EQ(std::get<1>(torch::unique_dim(rows, 0)).numel(), 0);  // not asked for
  EXPECT_SHAPE(std::get<0>(torch::unique_dim(torch::zeros({0, 3}), 0)), {0, 3});
  EXPECT_ERROR("unique_dim: dimension out of range", torch::unique_dim(rows, 2));
}

TEST(Statistics, WindowsShiftsAndSamplersMatchPyTorch) {
  expect_golden("hann_window", torch::hann_window(6, true, torch::kDouble));
  expect_golden("hamming_window_symmetric",
                torch::hamming_window(5, false, 0.54, 0.46, torch::kDouble));
  expect_golden("blackman_window", torch::blackman_window(6, true, torch::kDouble));
  expect_golden("bartlett_window", torch::bartlett_window(7, true, torch::kDouble));
  expect_golden("kaiser_window", torch::kaiser_window(6, true, 8.0, torch::kDouble), 1e-12);
  EXPECT_EQ(torch::hann_window(4).scalar_type(), torch::kFloat);
  EXPECT_VALUES(torch::hann_window(1), {1});
  EXPECT_EQ(torch::hann_window(0).numel(), 0);
  expect_golden("bitwise_left_shift",
                torch::bitwise_left_shift(L({1, -3, 5, 7}), L({2, 1, 0, 62})));
  expect_golden("bitwise_right_shift",
                torch::bitwise_right_shift(L({16, -16, 5, -1}), L({2, 3, 1, 70})));
  EXPECT_VALUES(torch::bitwise_left_shift(torch::ones({2}, kInt), 3), {8, 8});
  EXPECT_EQ(torch::bitwise_right_shift(torch::ones({2}, kInt), 1).scalar_type(), kInt);
  torch::manual_seed(11);
  Tensor counts = torch::full({20000}, 10.0), probs = torch::full({20000}, 0.3);
  Tensor draws = torch::binomial(counts, probs);
  EXPECT_NEAR(draws.mean().item<float>(), 3.0, 0.05);
  EXPECT_NEAR(draws.var().item<float>(), 2.1, 0.1);
  EXPECT_TRUE(draws.eq(draws.floor()).all().item<bool>());
  Tensor p = torch::poisson(torch::full({20000}, 4.0));
  EXPECT_NEAR(p.mean().item<float>(), 4.0, 0.06);
  EXPECT_NEAR(p.var().item<float>(), 4.0, 0.2);
  torch::manual_seed(11);
  EXPECT_TRUE(torch::binomial(counts, probs).equal(draws));  // reproducible
  EXPECT_EQ(torch::poisson(torch::zeros({3})).sum().item<float>(), 0.0f);
}

TEST(Statistics, LogcumsumexpGradientAndHistogramddMatchPyTorch) {
  expect_golden("logcumsumexp", torch::logcumsumexp(S({3, 4}) * 3, 1));
  Tensor in = S({3, 4}), before = in.clone();
  torch::logcumsumexp(in, 1);
  EXPECT_TRUE(in.equal(before)) << "logcumsumexp wrote into its input";
  // No overflow or underflow where exp would: -1000 and 800 stay themselves.
  expect_golden("logcumsumexp_extreme", torch::logcumsumexp(D({-1000, 0, 800, -INFINITY, 800}), 0));
  Tensor f = S({4, 5}).pow(2);
  // The overloads are libtorch's: a bare number or dim is ambiguous there too.
  expect_golden("gradient_uniform", torch::stack(torch::gradient(f, std::optional<Scalar>(0.5))));
  expect_golden("gradient_order2",
                torch::stack(torch::gradient(f, std::vector<Scalar>{0.5, 2.0}, std::nullopt, 2)));
  std::vector<Tensor> x{D({0, 0.3, 1.0, 1.2, 2.0})};
  expect_golden("gradient_coordinates", torch::gradient(f, x, IntArrayRef{1})[0]);
  expect_golden("gradient_coordinates_order2",
                torch::gradient(f, x, std::optional<int64_t>(1), 2)[0]);
  // Along chosen dims, spacing 1.
  auto g = torch::gradient(f, IntArrayRef{1});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(torch::allclose(g[0], torch::gradient(f, Scalar(1.0), IntArrayRef{1})[0]));
  auto [hist, edges] =
      torch::histogramdd(S({20, 2}), {3, 4}, std::nullopt, S({20}, 0.2, 0.4).abs());
  expect_golden("histogramdd_hist", hist);
  ASSERT_EQ(edges.size(), 2u);
  expect_golden("histogramdd_edges1", edges[1]);
  expect_golden("histogramdd_range_density",
                std::get<0>(torch::histogramdd(
                    S({4, 5, 2}), 2, std::vector<double>{-1.0, 0.5, -0.5, 1.0}, {}, true)));
  std::vector<Tensor> bins{D({-1, 0, 1}), D({-1, -0.5, 0.2, 1})};
  expect_golden("histogramdd_edges_tensors", std::get<0>(torch::histogramdd(S({20, 2}), bins)));
}

TEST(Statistics, BadInputGetsClearErrors) {
  EXPECT_ERROR("logcumsumexp(): expected a floating-point tensor", torch::logcumsumexp(L({1}), 0));
  EXPECT_ERROR("torch.gradient only supports edge_order=1 and edge_order=2.",
               torch::gradient(S({4}), std::optional<Scalar>(1.0), std::nullopt, 3));
  EXPECT_ERROR("torch.gradient expected each dimension size to be at least edge_order+1",
               torch::gradient(S({2}), std::optional<Scalar>(1.0), std::nullopt, 2));
  EXPECT_ERROR("a spacing argument of length 2 and a dim argument of length 1",
               torch::gradient(S({4}), std::vector<Scalar>{1.0, 2.0}));
  EXPECT_ERROR("torch.histogramdd: input tensor should have at least 2 dimensions",
               torch::histogramdd(S({4}), 2));
  EXPECT_ERROR("expected 2 sequences of bin edges or bin counts",
               torch::histogramdd(S({4, 2}), {2, 2, 2}));
  EXPECT_ERROR("range should have 4 elements",
               torch::histogramdd(S({4, 2}), 2, std::vector<double>{0, 1}));
  EXPECT_ERROR("q values must be in the range [0, 1]", torch::quantile(S({4}), 1.5));
  EXPECT_ERROR("interpolation must be one of linear",
               torch::quantile(S({4}), 0.5, 0, false, "cubic"));
  EXPECT_ERROR("input tensor must be either float or double", torch::quantile(L({1, 2}), 0.5));
  EXPECT_ERROR("expected input to have two or fewer dimensions", torch::cov(S({2, 2, 2})));
  EXPECT_ERROR("fweights cannot be negative", torch::cov(S({2, 3}), 1, L({1, -1, 1})));
  EXPECT_ERROR("There must be one `x` value for each sample point",
               torch::trapezoid(S({2, 5}), D({0, 1})));
  EXPECT_ERROR("bins must be > 0", torch::histogram(S({5}), 0));
  EXPECT_ERROR("bin edges must be non-decreasing", torch::histogram(S({5}), D({1, 0})));
  EXPECT_ERROR("Expected a long tensor for index", torch::put(S({3}), D({0}), D({1})));
  EXPECT_ERROR("same number of elements", torch::put(S({3}), L({0, 1}), D({1})));
  EXPECT_ERROR("requires non-negative window_length", torch::hann_window(-1));
  EXPECT_ERROR("expected integral counts >= 0 and probabilities in [0, 1]",
               torch::binomial(torch::full({1}, 2.5), torch::full({1}, 0.5)));
  EXPECT_ERROR("expected finite rates >= 0", torch::poisson(torch::full({1}, -1.0)));
  EXPECT_ERROR("bitwise_left_shift: expected integer tensors",
               torch::bitwise_left_shift(D({1}), L({1})));
  EXPECT_ERROR("nanmedian() input tensor cannot be empty", torch::nanmedian(torch::ones({0})));
}

}  // namespace

namespace {

using namespace brasa;

TEST(Statistics, MoreBadInputGetsClearErrors) {
  EXPECT_ERROR("torch.histogramdd(): bins must be > 0, but got 0 for dimension 1",
               torch::histogramdd(golden::S({4, 2}), {2, 0}));
  std::vector<Tensor> flat_bins{golden::D({0}), golden::D({0, 1})};
  EXPECT_ERROR("torch.histogramdd(): bins tensor should have one dimension and at least 2 elements",
               torch::histogramdd(golden::S({4, 2}), flat_bins));
  std::vector<Tensor> falling{golden::D({1, 0}), golden::D({0, 1})};
  EXPECT_ERROR("torch.histogramdd(): bin edges must be non-decreasing (dimension 0)",
               torch::histogramdd(golden::S({4, 2}), falling));
  EXPECT_ERROR(
      "torch.histogramdd(): min should not exceed max, but got min 1 max 0 for dimension 0",
      torch::histogramdd(golden::S({4, 2}), 2, std::vector<double>{1, 0, 0, 1}));
  EXPECT_ERROR("torch.histogramdd(): range of [0, inf] is not finite",
               torch::histogramdd(golden::S({4, 2}), 2, std::vector<double>{0, INFINITY, 0, 1}));
  EXPECT_ERROR("torch.gradient: dim 1 appears multiple times in the list of dims",
               torch::gradient(golden::S({3, 4}), IntArrayRef{1, -1}));
  std::vector<Tensor> short_x{golden::D({0, 1, 2})};
  EXPECT_ERROR("torch.gradient expected each tensor to be on the same device and of size 4",
               torch::gradient(golden::S({3, 4}), short_x, IntArrayRef{1}));
}

}  // namespace
