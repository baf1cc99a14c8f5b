// torch::special (ops/special_functions.h) against PyTorch 1.13's outputs
// (libtorch_goldens.h) over each function's ranges, its derivatives, and the
// error paths.
#include <brasa/torch.h>

#include <cmath>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;
using golden::D;
using golden::expect_golden;
using golden::S;

Tensor special_x() {
  return D({-30.0, -8.5, -3.0, -1.2, -0.5, -1e-3, 0.0, 1e-9, 0.3, 1.0, 2.5, 7.0, 24.9, 25.1, 40.0,
            120.0});
}

TEST(SpecialFunctions, BesselFunctionsMatchPyTorch) {
  Tensor x = special_x();
  expect_golden("special_i0e_i1e", torch::stack({torch::special::i0e(x), torch::special::i1e(x)}));
  expect_golden("special_k", torch::stack({torch::special::modified_bessel_k0(x),
                                           torch::special::modified_bessel_k1(x),
                                           torch::special::scaled_modified_bessel_k0(x),
                                           torch::special::scaled_modified_bessel_k1(x)}));
  // PyTorch 1.13's J and Y are off by up to 3e-8 for 5 < |x| < 25 (see
  // ExactValues); Brasa's match them to that.
  expect_golden("special_j_y",
                torch::stack({torch::special::bessel_j0(x), torch::special::bessel_j1(x),
                              torch::special::bessel_y0(x), torch::special::bessel_y1(x),
                              torch::special::spherical_bessel_j0(x)}),
                5e-8);
  expect_golden("special_modified_i", torch::stack({torch::special::modified_bessel_i0(x),
                                                    torch::special::modified_bessel_i1(x)}));
  expect_golden("special_airy_ai",
                torch::special::airy_ai(D({-30.0, -12.0, -10.9, -10.7, -8.0, -5.0, -2.0, -0.5, 0.0,
                                           1e-9, 0.5, 2.0, 5.0, 10.0, 30.0, 110.0})));
  // float in, float out; integers give the default float dtype.
  EXPECT_EQ(torch::special::bessel_j0(x.to(kFloat)).scalar_type(), kFloat);
  EXPECT_EQ(torch::special::i0e(torch::arange(3)).scalar_type(), kFloat);
}

// Against mpmath at 30 digits: full double precision over the ranges.
TEST(SpecialFunctions, ExactValues) {
  Tensor x = special_x();
  Tensor rows = torch::stack(
      {torch::special::bessel_j0(x), torch::special::bessel_j1(x), torch::special::bessel_y0(x),
       torch::special::bessel_y1(x), torch::special::modified_bessel_k0(x),
       torch::special::modified_bessel_k1(x), torch::special::scaled_modified_bessel_k0(x),
       torch::special::scaled_modified_bessel_k1(x), torch::special::i0e(x), torch::special::i1e(x),
       torch::special::erfcx(x), torch::special::log_ndtr(x)});
  Tensor airy = torch::special::airy_ai(D({-30.0, -12.0, -10.9, -10.7, -8.0, -5.0, -2.0, -0.5, 0.0,
                                           1e-9, 0.5, 2.0, 5.0, 10.0, 30.0, 110.0}));
  Tensor ndtri = torch::special::ndtri(D({1e-20, 1e-5, 0.02, 0.3, 0.51, 0.9, 0.999999}));
  expect_golden("special_exact", torch::cat({rows.flatten(), airy, ndtri}), 1e-13);
  // Tiny arguments, where the functions switch to their series.
  Tensor tiny = D({1e-300, 1e-12, 3e-9});
  expect_golden("special_tiny_exact",
                torch::cat({torch::special::bessel_y0(tiny), torch::special::bessel_y1(tiny),
                            torch::special::modified_bessel_k0(tiny),
                            torch::special::modified_bessel_k1(tiny),
                            torch::special::scaled_modified_bessel_k0(tiny),
                            torch::special::airy_ai(tiny), torch::special::airy_ai(-tiny)}),
                1e-13);
}

TEST(SpecialFunctions, NormalDistributionAndEntropyMatchPyTorch) {
  Tensor x = special_x();
  expect_golden("special_normal", torch::stack({torch::special::erfcx(x), torch::special::ndtr(x),
                                                torch::special::log_ndtr(x)}));
  expect_golden("special_ndtri", torch::special::ndtri(D({0.0, 1e-300, 1e-20, 1e-5, 0.02, 0.3, 0.5,
                                                          0.51, 0.9, 0.999999, 1.0, 1.5, -0.1})));
  // ndtri inverts ndtr.
  Tensor p = D({1e-12, 0.01, 0.25, 0.5, 0.75, 0.99});
  EXPECT_TRUE(torch::special::ndtr(torch::special::ndtri(p)).allclose(p, 1e-13, 0));
  expect_golden("special_entr_expit",
                torch::stack({torch::special::entr(x), torch::special::expit(x)}));
  expect_golden("special_xlog1py", torch::special::xlog1py(D({0.0, 0.0, 2.0, -1.5, 3.0}),
                                                           D({NAN, 0.5, 0.5, 3.0, -1.0})));
  EXPECT_TRUE(torch::special::xlog1py(2.0, D({0.5})).allclose(D({2 * std::log1p(0.5)})));
  expect_golden("special_zeta",
                torch::special::zeta(D({2.0, 3.5, 1.0, 0.5, 2.0, 4.0, 30.0, 2.0}),
                                     D({1.0, 0.7, 2.0, 1.0, -1.0, -1.5, 1.3, 50.0})));
  EXPECT_NEAR(torch::special::zeta(D({2.0}), 1.0).item<double>(), M_PI * M_PI / 6, 1e-14);
}

TEST(SpecialFunctions, OrthogonalPolynomialsMatchPyTorch) {
  Tensor x = D({-1.0, -0.7, -0.2, 0.0, 0.3, 0.5, 1.0, 1.7, -2.5, 0.9, 0.4, 3.0});
  Tensor n = D({3.0, 0.0, 5.0, 2.0, 7.0, 12.0, 4.0, 6.0, 3.0, -1.0, 1.0, 9.0});
  expect_golden("special_polynomials",
                torch::stack({torch::special::chebyshev_polynomial_t(x, n),
                              torch::special::chebyshev_polynomial_u(x, n),
                              torch::special::chebyshev_polynomial_v(x, n),
                              torch::special::chebyshev_polynomial_w(x, n),
                              torch::special::shifted_chebyshev_polynomial_t(x, n),
                              torch::special::shifted_chebyshev_polynomial_u(x, n),
                              torch::special::shifted_chebyshev_polynomial_v(x, n),
                              torch::special::shifted_chebyshev_polynomial_w(x, n),
                              torch::special::hermite_polynomial_h(x, n),
                              torch::special::hermite_polynomial_he(x, n),
                              torch::special::laguerre_polynomial_l(x, n),
                              torch::special::legendre_polynomial_p(x, n)}));
  expect_golden("special_polynomial_scalar_n", torch::special::legendre_polynomial_p(S({5}), 3));
  // Integer degrees as a tensor; the scalar-x form broadcasts over n.
  EXPECT_VALUES(torch::special::chebyshev_polynomial_t(0.5, torch::arange(4)), {1, 0.5, -0.5, -1});
}

TEST(SpecialFunctions, AliasesAreTheTopLevelOps) {
  Tensor x = S({6}).abs() + 0.1;
  EXPECT_TRUE(torch::special::gammaln(x).allclose(torch::lgamma(x)));
  EXPECT_TRUE(torch::special::psi(x).allclose(torch::digamma(x)));
  EXPECT_TRUE(torch::special::expit(x).allclose(torch::sigmoid(x)));
  EXPECT_TRUE(torch::special::multigammaln(x + 2, 3).allclose(torch::mvlgamma(x + 2, 3)));
  EXPECT_TRUE(torch::special::gammainc(x, x * 2).allclose(torch::igamma(x, x * 2)));
  EXPECT_TRUE(torch::special::logsumexp(x, {0}).allclose(torch::logsumexp(x, {0})));
  EXPECT_TRUE(torch::special::softmax(x, 0).allclose(torch::softmax(x, 0)));
  EXPECT_TRUE(torch::special::i1(x).allclose(torch::special::modified_bessel_i1(x)));
  EXPECT_TRUE(torch::special::xlogy(x, 2.0).allclose(x * std::log(2.0)));
}

TEST(SpecialFunctions, DerivativesMatchPyTorch) {
  std::vector<Tensor> grads;
  auto grad_of = [&](Tensor (*f)(const Tensor&), std::vector<double> at) {
    Tensor t = D(at).requires_grad_();
    f(t).sum().backward();
    grads.push_back(t.grad());
  };
  grad_of(torch::special::i0e, {-2.0, 0.0, 0.5, 35.0});
  grad_of(torch::special::i1e, {-2.0, 0.0, 0.5, 35.0});
  grad_of(torch::special::entr, {0.5, 2.0});
  grad_of(torch::special::erfcx, {-1.0, 0.5, 30.0});
  grad_of(torch::special::ndtr, {-2.0, 0.3});
  grad_of(torch::special::log_ndtr, {-40.0, -2.0, 3.0});
  grad_of(torch::special::ndtri, {1e-10, 0.3, 0.8});
  Tensor q = D({0.7, 2.0}).requires_grad_();
  Tensor (*zeta)(const Tensor&, const Tensor&) = torch::special::zeta;
  zeta(D({3.5, 2.0}), q).sum().backward();
  grads.push_back(q.grad());
  expect_golden("special_grads", torch::cat(grads), 1e-9);
}

TEST(SpecialFunctions, BadInputGivesClearErrors) {
  Tensor x = D({0.5}).requires_grad_();
  EXPECT_ERROR("special_bessel_j0: the derivative is not implemented",
               torch::special::bessel_j0(x));
  EXPECT_ERROR("special_airy_ai: the derivative is not implemented", torch::special::airy_ai(x));
  EXPECT_ERROR("special_legendre_polynomial_p: the derivative is not implemented",
               torch::special::legendre_polynomial_p(x, 2));
  {
    NoGradGuard no_grad;  // values only: fine
    EXPECT_NEAR(torch::special::bessel_j0(x).item<double>(), 0.938469807240813, 1e-14);
  }
  EXPECT_ERROR("the derivative for 'special_zeta: self' is not implemented.",
               torch::special::zeta(x, D({1.0})).sum().backward());
  EXPECT_ERROR("special_i0e: not implemented for dtype Bool",
               torch::special::i0e(torch::ones({2}, kBool)));
  EXPECT_ERROR("special_zeta: shapes", torch::special::zeta(D({2.0, 3.0}), D({1.0, 2.0, 3.0})));
  EXPECT_ERROR("special_i0e: not implemented for complex tensors",
               torch::special::i0e(torch::complex(D({1.0}), D({1.0}))));
  EXPECT_ERROR("special_zeta: not implemented for complex tensors",
               torch::special::zeta(torch::complex(D({1.0}), D({1.0})), D({1.0})));
}

}  // namespace
