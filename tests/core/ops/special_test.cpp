// The special functions (ops/special.h) and the remaining elementwise
// functions (ops/math_extra.h) against PyTorch's outputs; their error paths.
// Gradients are in the gradcheck table.
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

TEST(SpecialFunctions, MatchPyTorch) {
  expect_golden("erfc", torch::erfc(S({7}) * 4));
  expect_golden("lgamma", torch::lgamma(D({0.5, 1.0, 2.5, 10.0, -0.5, -2.5, 100.0})), 1e-12);
  expect_golden("digamma", torch::digamma(D({0.5, 1.0, 2.5, 10.0, -0.5, -2.5, 100.0, 1e-3})),
                1e-12);
  // PyTorch 1.13's trigamma is good to about 1e-9; the exact values at 1/2
  // and 1 (pi^2 / 2 and pi^2 / 6) are met more closely.
  expect_golden("polygamma1", torch::polygamma(1, D({0.5, 1.0, 2.5, 10.0, -0.5, -2.5})), 1e-9);
  EXPECT_CLOSE(torch::polygamma(1, D({0.5, 1.0})),
               (std::vector<double>{M_PI * M_PI / 2, M_PI * M_PI / 6}), 1e-14);
  expect_golden("polygamma3", torch::polygamma(3, D({0.5, 1.0, 2.5, 10.0, -0.5})), 1e-12);
  expect_golden("mvlgamma", torch::mvlgamma(S({5}).abs() + 2, 3), 1e-12);
  expect_golden("i0", torch::i0(D({0.0, 0.5, -1.5, 4.0, 20.0, -50.0})), 1e-13);
  // Poles, as PyTorch gives them.
  EXPECT_EQ(torch::digamma(D({0.0})).item<double>(), -INFINITY);
  EXPECT_TRUE(std::isnan(torch::digamma(D({-2.0})).item<double>()));
  // float32 in, float32 out; integers give the default dtype.
  EXPECT_EQ(torch::lgamma(torch::ones({2})).scalar_type(), torch::kFloat);
  EXPECT_EQ(torch::i0(L({1, 2})).scalar_type(), torch::kFloat);
  EXPECT_NEAR(torch::i0(L({1})).item<float>(), 1.2660658777520084, 1e-6);
}

TEST(SpecialFunctions, IncompleteGammaMatchesPyTorch) {
  Tensor a = D({0.5, 1.0, 2.5, 10.0, 3.0, 0.1}), x = D({0.2, 1.0, 4.0, 9.0, 0.01, 30.0});
  expect_golden("igamma", torch::igamma(a, x), 1e-12);
  expect_golden("igammac", torch::igammac(a, x), 1e-12);
  expect_golden("igamma_edges",
                torch::igamma(D({0, 0, 2, -1, INFINITY, 2}), D({1, 0, 0, 1, 3, INFINITY})));
  // P + Q = 1, also broadcast and in float32.
  Tensor p = torch::igamma(D({0.7, 4.0}).view({2, 1}), D({0.5, 3.0, 12.0}));
  Tensor q = torch::igammac(D({0.7, 4.0}).view({2, 1}), D({0.5, 3.0, 12.0}));
  EXPECT_SHAPE(p, {2, 3});
  EXPECT_TRUE(torch::allclose(p + q, torch::ones({2, 3}, kDouble), 1e-14, 1e-14));
  EXPECT_EQ(torch::igamma(a.to(kFloat), x.to(kFloat)).scalar_type(), kFloat);
}

TEST(SpecialFunctions, BadInputGetsClearErrors) {
  EXPECT_ERROR("igamma: not implemented for dtype Long", torch::igamma(L({1}), L({2})));
  Tensor a = D({2.0}).requires_grad_();
  EXPECT_ERROR("the derivative for 'igamma: input' is not implemented.",
               torch::igamma(a, D({1.0})).backward());
  EXPECT_ERROR("does not support negative n", torch::polygamma(-1, D({1})));
  EXPECT_ERROR("All elements must be greater than (p-1)/2 = 1", torch::mvlgamma(D({1.0}), 3));
  EXPECT_ERROR("p has to be greater than or equal to 1", torch::mvlgamma(D({1.0}), 0));
  EXPECT_ERROR("lgamma: not implemented for dtype Bool", torch::lgamma(torch::ones({1}, kBool)));
  EXPECT_ERROR("erfc: expected a defined tensor", torch::erfc(Tensor()));
}

TEST(MathExtra, MatchPyTorch) {
  const double nan = NAN;
  expect_golden("copysign", torch::copysign(S({6}), S({6}, 0.5, 0.3)));
  EXPECT_VALUES(torch::copysign(D({2, -3}), -0.0), {-2, -3});  // the sign bit of -0.0
  expect_golden("fmax", torch::fmax(D({1, nan, 3, nan}), D({2, 5, nan, nan})));
  expect_golden("fmin", torch::fmin(D({1, nan, 3}), D({2, 5, nan})));
  EXPECT_VALUES(torch::fmax(L({1, 7}), L({3, 2})), {3, 7});
  expect_golden("heaviside", torch::heaviside(D({-1.5, 0, 2}), D({0.5, 0.5, 0.5})));
  EXPECT_VALUES(torch::signbit(D({-0.0, 0.0, -2, 3})).to(kLong), {1, 0, 1, 0});
  EXPECT_VALUES(torch::signbit(L({-1, 0, 2})).to(kLong), {1, 0, 0});
  EXPECT_VALUES(torch::isposinf(D({INFINITY, -INFINITY, 1, nan})).to(kLong), {1, 0, 0, 0});
  EXPECT_VALUES(torch::isneginf(D({INFINITY, -INFINITY, 1, nan})).to(kLong), {0, 1, 0, 0});
  expect_golden("float_power", torch::float_power(S({5}).abs(), 2.5));
  EXPECT_EQ(torch::float_power(torch::ones({2}), torch::ones({2})).scalar_type(), torch::kDouble);
  EXPECT_VALUES(torch::float_power(2, L({1, 3})), {2, 8});
  expect_golden("ldexp", torch::ldexp(S({4}), L({1, 2, -1, 3})));
  expect_golden("gcd", torch::gcd(L({12, 0, -18, 7}), L({8, 5, 12, 0})));
  expect_golden("lcm", torch::lcm(L({4, 0, -6, 7}), L({6, 5, 4, 3})));
  EXPECT_EQ(torch::gcd(torch::ones({1}, kInt), torch::ones({1}, kInt)).scalar_type(), kInt);
  Tensor one = torch::ones({1}, kFloat);
  EXPECT_EQ(torch::nextafter(one, one * 2).item<float>(), std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(torch::nextafter(D({1}), D({0})).item<double>(), std::nextafter(1.0, 0.0));
  auto [mantissa, exponent] = torch::frexp(D({0, 8, -3.5}));
  EXPECT_VALUES(mantissa, {0, 0.5, -0.875});
  EXPECT_VALUES(exponent, {0, 4, 2});
  EXPECT_EQ(exponent.scalar_type(), kInt);
}

TEST(MathExtra, BadInputGetsClearErrors) {
  EXPECT_ERROR("gcd: expected integer tensors, got Double and Long", torch::gcd(D({1}), L({1})));
  EXPECT_ERROR("lcm: expected integer tensors", torch::lcm(L({1}), D({1})));
  EXPECT_ERROR("nextafter: expected two float32 or two float64 tensors",
               torch::nextafter(D({1}), torch::ones({1})));
  EXPECT_ERROR("only supports floating-point dtypes", torch::frexp(L({1})));
  EXPECT_ERROR("heaviside is not yet implemented for tensors with different dtypes",
               torch::heaviside(D({1}), torch::ones({1})));
  EXPECT_ERROR("heaviside: the derivative is not implemented",
               torch::heaviside(D({1}).requires_grad_(), D({1})));
}

}  // namespace
