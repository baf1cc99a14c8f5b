// Linear algebra (ops/decompositions.h) against PyTorch's outputs (LAPACK in
// both; singular vectors compared up to sign), the identities each
// decomposition must satisfy, and the error paths. Gradients are in the
// gradcheck table.
#include <brasa/torch.h>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;
using golden::expect_golden;
using golden::S;
using golden::spd;
using golden::W;

TEST(Decompositions, DeterminantsAndInversesMatchPyTorch) {
  Tensor eye3 = torch::eye(3, kDouble);
  expect_golden("det", torch::det(W({2, 3, 3}) + eye3 * 2));
  expect_golden("det_singular", torch::det(golden::D({1, 2, 2, 4}).view({2, 2})));
  expect_golden("logdet", torch::logdet(spd(3)));
  auto [sign, logabs] = torch::slogdet(W({3, 3}));
  expect_golden("slogdet_sign", sign);
  expect_golden("slogdet_logabs", logabs);
  EXPECT_TRUE(std::isnan(torch::logdet(-eye3).item<double>()));  // det -1
  expect_golden("inverse", torch::inverse(W({2, 3, 3}) + eye3 * 3));
  Tensor a = W({4, 4}) + torch::eye(4, kDouble) * 2;
  EXPECT_TRUE(torch::matmul(a, torch::inverse(a)).allclose(torch::eye(4, kDouble), 1e-12, 1e-12));
  // float32 in, float32 out.
  EXPECT_EQ(torch::inverse(a.to(kFloat)).scalar_type(), kFloat);
  EXPECT_SHAPE(torch::det(torch::ones({0, 2, 2})), {0});
}

TEST(Decompositions, CholeskyTriangularAndLuMatchPyTorch) {
  expect_golden("cholesky", torch::cholesky(spd(4)));
  expect_golden("cholesky_upper", torch::cholesky(spd(4), true));
  Tensor L = torch::cholesky(spd(4));
  expect_golden("cholesky_solve", torch::cholesky_solve(S({4, 2}, 0.5, 0.3), L));
  EXPECT_TRUE(torch::cholesky_solve(S({4, 2}, 0.5, 0.3), L.mT(), true)
                  .allclose(torch::cholesky_solve(S({4, 2}, 0.5, 0.3), L), 1e-12));
  expect_golden("cholesky_inverse", torch::cholesky_inverse(torch::cholesky(spd(3))));
  Tensor U = torch::triu(W({3, 3})) + torch::eye(3, kDouble) * 2;
  auto [x, copy] = torch::triangular_solve(S({3, 2}, 0.5, 0.3), U);
  expect_golden("triangular_solve", x);
  EXPECT_TRUE(copy.equal(U));
  expect_golden("triangular_solve_lower_t_unit",
                std::get<0>(torch::triangular_solve(S({3, 2}, 0.5, 0.3), torch::tril(W({3, 3})),
                                                    false, true, true)));
  // Batch dims broadcast.
  EXPECT_SHAPE(std::get<0>(torch::triangular_solve(torch::ones({5, 3, 2}, kDouble), U)), {5, 3, 2});
  auto [LU, piv] = torch::linalg_lu_factor(W({4, 4}));
  EXPECT_EQ(piv.scalar_type(), kInt);
  auto [P, Lf, Uf] = torch::lu_unpack(LU, piv);
  expect_golden("lu_unpack_P", P);
  expect_golden("lu_unpack_L", Lf);
  expect_golden("lu_unpack_U", Uf);
  EXPECT_TRUE(torch::matmul(P, torch::matmul(Lf, Uf)).allclose(W({4, 4}), 1e-12, 1e-12));
  expect_golden("lu_solve", torch::lu_solve(S({4, 2}, 0.5, 0.3), LU, piv));
}

TEST(Decompositions, QrSvdAndEigenvaluesMatchPyTorch) {
  auto [Q, R] = torch::qr(W({4, 3}));
  expect_golden("qr_Q", Q);
  expect_golden("qr_R", R);
  EXPECT_TRUE(torch::matmul(Q, R).allclose(W({4, 3}), 1e-12, 1e-12));
  expect_golden("qr_complete_Q", std::get<0>(torch::qr(W({4, 3}), false)));
  expect_golden("qr_wide_R", std::get<1>(torch::qr(W({2, 4}))));
  auto [a, tau] = torch::geqrf(W({4, 3}));
  expect_golden("geqrf_a", a);
  expect_golden("geqrf_tau", tau);
  expect_golden("orgqr", torch::orgqr(a, tau));
  expect_golden("ormqr", torch::ormqr(a, tau, S({4, 2}, 0.5, 0.3), true, true));
  // With a gradient wanted they are composed from differentiable ops instead
  // of LAPACK: the same values, in every side and transpose, batched too.
  Tensor a_grad = a.detach().requires_grad_(), tau_grad = tau.detach().requires_grad_();
  expect_golden("orgqr", torch::orgqr(a_grad, tau_grad));
  expect_golden("ormqr", torch::ormqr(a_grad, tau_grad, S({4, 2}, 0.5, 0.3), true, true));
  for (bool left : {true, false})
    for (bool transpose : {true, false}) {
      Tensor c = left ? S({4, 2}, 0.5, 0.3) : S({2, 4}, 0.5, 0.3);
      EXPECT_TRUE(torch::ormqr(a_grad, tau_grad, c, left, transpose)
                      .allclose(torch::ormqr(a, tau, c, left, transpose), 1e-12, 1e-12))
          << "left " << left << " transpose " << transpose;
    }
  Tensor batch_a = torch::stack({a, a * 0.5}), batch_tau = torch::stack({tau, tau * 0.5});
  EXPECT_TRUE(torch::orgqr(batch_a.requires_grad_(), batch_tau)
                  .allclose(torch::orgqr(batch_a.detach(), batch_tau), 1e-12, 1e-12));
  EXPECT_ERROR("orgqr: tau's batch dims [3] must equal input's [2, 4, 3]",
               torch::orgqr(batch_a, tau));
  EXPECT_ERROR("orgqr: tau's dtype Float must equal input's Double",
               torch::orgqr(a_grad, tau.to(torch::kFloat)));
  EXPECT_ERROR("ormqr: input.shape[-2] (4) must equal other.shape[-1] (2)",
               torch::ormqr(a_grad, tau_grad, S({4, 2}, 0.5, 0.3), false));
  EXPECT_ERROR("ormqr: input, tau and other must have one dtype, got Double, Double and Float",
               torch::ormqr(a_grad, tau_grad, S({4, 2}, 0.5, 0.3).to(torch::kFloat)));
  EXPECT_ERROR("ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]",
               torch::ormqr(a, torch::cat({tau, tau}), S({4, 2}, 0.5, 0.3)));
  auto [Us, Ss, Vs] = torch::svd(W({4, 3}));
  expect_golden("svd_S", Ss);
  expect_golden("svd_U_abs", Us.abs());
  expect_golden("svd_V_abs", Vs.abs());
  EXPECT_TRUE(torch::matmul(Us * Ss.unsqueeze(0), Vs.mT()).allclose(W({4, 3}), 1e-12, 1e-12));
  auto [Uc, Sc, Vc] = torch::svd(W({4, 3}), false);
  EXPECT_SHAPE(Uc, {4, 4});
  EXPECT_TRUE(torch::matmul(Uc.mT(), Uc).allclose(torch::eye(4, kDouble), 1e-12, 1e-12));
  auto [Un, Sn, Vn] = torch::svd(W({4, 3}), true, false);
  EXPECT_TRUE(Sn.allclose(Ss) && Un.eq(0).all().item<bool>());
  Tensor sym = spd(4) - torch::eye(4, kDouble) * 3;
  auto [e, V] = torch::symeig(sym, true);
  expect_golden("symeig_e", e);
  expect_golden("symeig_V_abs", V.abs());
  EXPECT_TRUE(torch::matmul(V * e.unsqueeze(0), V.mT()).allclose(sym, 1e-12, 1e-12));
  EXPECT_EQ(std::get<1>(torch::symeig(sym)).numel(), 0);  // no eigenvectors asked for
  // Only the named triangle is read.
  EXPECT_TRUE(std::get<0>(torch::symeig(torch::triu(sym))).allclose(e, 1e-12));
  EXPECT_TRUE(std::get<0>(torch::symeig(torch::tril(sym), false, false)).allclose(e, 1e-12));
}

TEST(Decompositions, CompositesMatchPyTorch) {
  expect_golden("pinverse", torch::pinverse(W({4, 3})));
  expect_golden("matrix_power_3", torch::matrix_power(W({3, 3}), 3));
  expect_golden("matrix_power_m2", torch::matrix_power(W({3, 3}) + torch::eye(3, kDouble) * 2, -2));
  EXPECT_TRUE(torch::matrix_power(W({3, 3}), 0).equal(torch::eye(3, kDouble)));
  expect_golden("matrix_exp", torch::matrix_exp(W({2, 3, 3}) * 2), 1e-12);
  expect_golden("nuclear_norm", torch::nuclear_norm(W({4, 3})));
  expect_golden("nuclear_norm_dims", torch::nuclear_norm(W({2, 3, 4}), {0, 2}));
  EXPECT_SHAPE(torch::nuclear_norm(W({2, 3, 4}), {0, 2}, true), {1, 3, 1});
}

// LAPACK overwrites its buffers: an input whose transpose is contiguous
// must still be copied first, never written.
TEST(Decompositions, InputsAreNeverOverwritten) {
  Tensor x = W({3, 3}) + torch::eye(3, kDouble) * 3, b = W({2, 3});
  Tensor x0 = x.clone(), b0 = b.clone();
  Tensor sym = torch::matmul(x, x.t());
  Tensor sym0 = sym.clone();
  torch::inverse(x.t());
  torch::det(x.t());
  torch::cholesky(sym.t());
  torch::triangular_solve(b.t(), x.t());
  torch::qr(x.t());
  torch::svd(x.t());
  torch::symeig(sym.t(), true);
  torch::geqrf(x.t());
  torch::linalg_lu_factor(x.t());
  EXPECT_TRUE(x.equal(x0));
  EXPECT_TRUE(b.equal(b0));
  EXPECT_TRUE(sym.equal(sym0));
}

TEST(Decompositions, BadInputGetsClearErrors) {
  Tensor singular = golden::D({1, 2, 2, 4}).view({2, 2});
  EXPECT_ERROR("linalg.inv: The diagonal element 2 is zero", torch::inverse(singular));
  EXPECT_ERROR("(batch element 1)",
               torch::inverse(torch::stack({torch::eye(2, kDouble), singular})));
  EXPECT_ERROR("A must be batches of square matrices, but they are 2 by 3 matrices",
               torch::det(S({2, 3})));
  EXPECT_ERROR("must have at least 2 dimensions", torch::inverse(S({3})));
  EXPECT_ERROR("Expected a floating point tensor", torch::det(torch::ones({2, 2}, kLong)));
  EXPECT_ERROR("the leading minor of order 2 is not positive-definite",
               torch::cholesky(golden::D({1, 2, 2, 1}).view({2, 2})));
  EXPECT_ERROR("Incompatible matrix sizes", torch::triangular_solve(S({2, 2}), W({3, 3})));
  EXPECT_ERROR("The diagonal element 1 is zero",
               torch::triangular_solve(S({2, 1}), torch::zeros({2, 2}, kDouble)));
  EXPECT_ERROR("expected int32 LU_pivots", torch::lu_unpack(W({3, 3}), torch::ones({3}, kLong)));
  EXPECT_ERROR("geqrf: the derivative is not implemented",
               torch::geqrf(W({3, 3}).requires_grad_()));
  EXPECT_ERROR("qr: the derivative is implemented for inputs with at least as many rows",
               std::get<1>(torch::qr(W({2, 4}).requires_grad_())).sum().backward());
  EXPECT_ERROR("Setting compute_uv to false",
               std::get<1>(torch::svd(W({3, 3}).requires_grad_(), true, false)).sum().backward());
  EXPECT_ERROR("dim must be a 2-tuple", torch::nuclear_norm(W({2, 3, 4}), std::vector<int64_t>{0}));
}

}  // namespace
