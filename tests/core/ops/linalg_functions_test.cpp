// torch::linalg (ops/linalg_functions.h) against PyTorch 1.13's outputs
// (libtorch_goldens.h), the identities its results must satisfy, libtorch's
// call spellings, and the error paths. Gradients are in the gradcheck table.
#include <brasa/torch.h>

#include <cmath>
#include <limits>

#include "../test_util.h"
#include "golden_util.h"

namespace {

using namespace brasa;
using golden::expect_golden;
using golden::S;
using golden::spd;
using golden::W;

Tensor eye(int64_t n) { return torch::eye(n, kDouble); }
const double kInf = std::numeric_limits<double>::infinity();

TEST(LinalgFunctions, SolversMatchPyTorch) {
  Tensor A = W({3, 3}) + eye(3) * 2;
  expect_golden("linalg_solve", torch::linalg::solve(A, S({3, 2}, 0.5, 0.3), true));
  expect_golden("linalg_solve_batched_vector",
                torch::linalg::solve(W({2, 3, 3}) + eye(3) * 2, S({3}, 0.5, 0.3)));
  expect_golden("linalg_solve_right", torch::linalg::solve(A, S({2, 3}, 0.5, 0.3), false));
  auto [X, info] = torch::linalg::solve_ex(torch::stack({eye(3), torch::zeros({3, 3}, kDouble)}),
                                           S({3}), true, false);
  expect_golden("linalg_solve_ex_info", info);
  EXPECT_EQ(info.scalar_type(), kInt);
  EXPECT_TRUE(X[0].allclose(S({3})));
  // A batch of vectors: B with A's shape minus the last dim.
  Tensor Ab = W({2, 3, 3}) + eye(3) * 2, bb = S({2, 3});
  Tensor xb = torch::linalg::solve(Ab, bb);
  EXPECT_SHAPE(xb, {2, 3});
  EXPECT_TRUE(torch::matmul(Ab, xb.unsqueeze(-1)).squeeze(-1).allclose(bb, 1e-12, 1e-12));
  // Batch dims broadcast.
  EXPECT_SHAPE(torch::linalg::solve(A, torch::ones({4, 3, 2}, kDouble)), {4, 3, 2});
  // float32 stays float32.
  EXPECT_EQ(torch::linalg::solve(A.to(kFloat), S({3, 2}).to(kFloat)).scalar_type(), kFloat);

  expect_golden("linalg_solve_triangular_right",
                torch::linalg::solve_triangular(torch::triu(W({3, 3})) + eye(3) * 2,
                                                S({2, 3}, 0.5, 0.3), true, false));
  expect_golden("linalg_solve_triangular_lower_unit",
                torch::linalg::solve_triangular(torch::tril(W({3, 3})), S({3, 2}, 0.5, 0.3),
                                                /*upper=*/false, /*left=*/true,
                                                /*unitriangular=*/true));
}

TEST(LinalgFunctions, LeastSquaresMatchesPyTorchForEachDriver) {
  Tensor A = W({5, 3}), B = S({5, 2}, 0.5, 0.3);
  auto gels = torch::linalg::lstsq(A, B, c10::nullopt, "gels");
  expect_golden("linalg_lstsq_gels", std::get<0>(gels));
  expect_golden("linalg_lstsq_gels_residuals", std::get<1>(gels));
  EXPECT_EQ(std::get<2>(gels).numel(), 0);  // gels computes no rank
  auto gelsy = torch::linalg::lstsq(A, B);
  expect_golden("linalg_lstsq_gelsy", std::get<0>(gelsy));
  EXPECT_EQ(std::get<1>(gelsy).numel(), 0);  // nor does gelsy residuals
  EXPECT_EQ(std::get<3>(gelsy).numel(), 0);
  expect_golden("linalg_lstsq_gelsy_rank",
                std::get<2>(torch::linalg::lstsq(W({2, 5, 3}), S({2, 5, 2}, 0.5, 0.3))));
  expect_golden("linalg_lstsq_gelsd_residuals",
                std::get<1>(torch::linalg::lstsq(A, B, c10::nullopt, "gelsd")));
  expect_golden("linalg_lstsq_gelss_singular_values",
                std::get<3>(torch::linalg::lstsq(A, B, c10::nullopt, "gelss")));
  // Rank-deficient: the minimum-norm solution, and no residuals.
  auto deficient = torch::linalg::lstsq(S({5, 3}), B, c10::nullopt, "gelsd");
  expect_golden("linalg_lstsq_deficient", std::get<0>(deficient));
  expect_golden("linalg_lstsq_deficient_rank", std::get<2>(deficient));
  EXPECT_EQ(std::get<1>(deficient).numel(), 0);
  expect_golden("linalg_lstsq_wide",
                std::get<0>(torch::linalg::lstsq(W({3, 5}), S({3, 2}, 0.5, 0.3))));
  // With a derivative the solution comes from QR or the pseudo-inverse
  // instead of LAPACK's driver: the same values.
  for (const char* driver : {"gels", "gelsy", "gelsd", "gelss"})
    for (const Tensor& a : {A, S({5, 3}), W({3, 5})}) {
      if (std::string(driver) == "gels" && a.equal(S({5, 3}))) continue;  // gels needs full rank
      Tensor b = S({a.size(0), 2}, 0.5, 0.3);
      auto plain = torch::linalg::lstsq(a, b, c10::nullopt, driver);
      auto graded = torch::linalg::lstsq(a.clone().requires_grad_(), b, c10::nullopt, driver);
      EXPECT_TRUE(std::get<0>(graded).allclose(std::get<0>(plain), 1e-10, 1e-10)) << driver;
      EXPECT_TRUE(std::get<1>(graded).allclose(std::get<1>(plain), 1e-10, 1e-10)) << driver;
      EXPECT_TRUE(std::get<2>(graded).equal(std::get<2>(plain))) << driver;
    }
  expect_golden("linalg_lstsq_vector",
                std::get<0>(torch::linalg::lstsq(A, S({5}, 0.5, 0.3), c10::nullopt, "gels")));
}

// Gradients through eig and eigvals as PyTorch 1.13 gives them (its values
// printed to 4 decimals): a matrix with a complex pair, a loss of the
// eigenvalues and of the phase-free ratios of each eigenvector's entries.
TEST(LinalgFunctions, EigGradientsMatchPyTorch) {
  Tensor A = torch::tensor({2.0, 1.0, 0.0, 0.5, 3.0, 1.0, 0.0, -1.0, 1.0}, kDouble)
                 .view({3, 3})
                 .requires_grad_();
  auto [L, V] = torch::linalg::eig(A);
  Tensor loss = torch::view_as_real(L).pow(2).sum() * 0.5 + (V / V.narrow(-2, 0, 1)).abs().sum();
  loss.backward();
  EXPECT_TRUE(A.grad().allclose(
      torch::tensor({3.1314, -2.4899, 2.3485, 4.8485, 2.4343, -1.2172, 5.1314, -1.2828, 0.4343},
                    kDouble)
          .view({3, 3}),
      0, 1e-4))
      << A.grad();
  Tensor B = torch::tensor({0.0, -2.0, 2.0, 0.5}, kDouble).view({2, 2}).requires_grad_();
  Tensor values = torch::linalg::eigvals(B);
  (torch::imag(values).sum() + torch::real(values).prod()).backward();
  EXPECT_TRUE(
      B.grad().allclose(torch::tensor({0.25, 0.0, 0.0, 0.25}, kDouble).view({2, 2}), 0, 1e-12))
      << B.grad();
}

TEST(LinalgFunctions, EigenvaluesMatchPyTorch) {
  auto [values, vectors] = torch::linalg::eig(W({2, 4, 4}));
  EXPECT_EQ(values.scalar_type(), kComplexDouble);
  expect_golden("linalg_eig_values", torch::view_as_real(values));
  expect_golden("linalg_eig_vectors", torch::view_as_real(vectors));
  // A V = V diag(values), in complex arithmetic.
  Tensor Az = torch::complex(W({2, 4, 4}), torch::zeros({2, 4, 4}, kDouble));
  Tensor lhs = torch::matmul(Az, vectors), rhs = vectors * values.unsqueeze(-2);
  EXPECT_TRUE(torch::view_as_real(lhs).allclose(torch::view_as_real(rhs), 1e-10, 1e-10));
  expect_golden("linalg_eigvals_real", torch::view_as_real(torch::linalg::eigvals(spd(3))));
  EXPECT_EQ(torch::linalg::eigvals(spd(3).to(kFloat)).scalar_type(), kComplexFloat);

  expect_golden("linalg_eigh_upper", std::get<0>(torch::linalg::eigh(W({3, 3}), "U")));
  expect_golden("linalg_eigvalsh", torch::linalg::eigvalsh(W({2, 3, 3})));
  auto [e, V] = torch::linalg::eigh(spd(4));
  EXPECT_TRUE(torch::matmul(V * e.unsqueeze(0), V.mT()).allclose(spd(4), 1e-12, 1e-12));
}

TEST(LinalgFunctions, FactorizationsMatchPyTorch) {
  auto [P, L, U] = torch::linalg::lu(W({4, 3}));
  expect_golden("linalg_lu_P", P);
  expect_golden("linalg_lu_L", L);
  expect_golden("linalg_lu_U", U);
  EXPECT_TRUE(torch::matmul(P, torch::matmul(L, U)).allclose(W({4, 3}), 1e-12, 1e-12));
  auto [LU, piv] = torch::linalg::lu_factor(W({3, 3}));
  EXPECT_EQ(piv.scalar_type(), kInt);

  Tensor sym = W({4, 4}) + W({4, 4}).mT();  // symmetric, indefinite
  auto [LD, pivots] = torch::linalg::ldl_factor(sym);
  expect_golden("linalg_ldl_LD", LD);
  expect_golden("linalg_ldl_pivots", pivots);
  expect_golden("linalg_ldl_solve", torch::linalg::ldl_solve(LD, pivots, S({4, 2}, 0.5, 0.3)));
  auto [LD2, piv2, info] = torch::linalg::ldl_factor_ex(torch::zeros({3, 3}, kDouble));
  EXPECT_GT(info.item<int>(), 0);  // singular: reported, not raised

  auto [a, tau] = torch::geqrf(W({4, 3}));
  expect_golden("linalg_householder_product", torch::linalg::householder_product(a, tau));

  auto [Q, R] = torch::linalg::qr(W({4, 3}));
  EXPECT_SHAPE(Q, {4, 3});
  EXPECT_TRUE(torch::matmul(Q, R).allclose(W({4, 3}), 1e-12, 1e-12));
  EXPECT_SHAPE(std::get<0>(torch::linalg::qr(W({4, 3}), "complete")), {4, 4});
  auto [Qr, Rr] = torch::linalg::qr(W({4, 3}), "r");
  EXPECT_EQ(Qr.numel(), 0);
  EXPECT_TRUE(Rr.allclose(R));

  // svd: Vh, full matrices by default.
  auto [Uf, Sf, Vh] = torch::linalg::svd(W({2, 5, 3}));
  expect_golden("linalg_svd_full_S", Sf);
  EXPECT_SHAPE(Uf, {2, 5, 5});
  EXPECT_SHAPE(Vh, {2, 3, 3});
  EXPECT_TRUE(torch::matmul(Uf.mT(), Uf).allclose(eye(5).expand({2, 5, 5}), 1e-12, 1e-12));
  Tensor rebuilt = torch::matmul(Uf.narrow(-1, 0, 3) * Sf.unsqueeze(-2), Vh);
  EXPECT_TRUE(rebuilt.allclose(W({2, 5, 3}), 1e-12, 1e-12));
  auto [Uw, Sw, Vhw] = torch::linalg::svd(W({3, 5}), true, c10::nullopt);
  EXPECT_SHAPE(Vhw, {5, 5});
  EXPECT_TRUE(torch::matmul(Vhw, Vhw.mT()).allclose(eye(5), 1e-12, 1e-12));
  auto [Ur, Sr, Vhr] = torch::linalg::svd(W({3, 5}), false);
  EXPECT_SHAPE(Vhr, {3, 5});
  EXPECT_TRUE(torch::linalg::svdvals(W({3, 5})).allclose(Sr));
}

TEST(LinalgFunctions, NormsMatchPyTorch) {
  std::vector<Tensor> vn;
  for (double o : {2.0, 1.0, kInf, -kInf, 0.0, 3.5, -1.5})
    vn.push_back(torch::linalg::vector_norm(S({2, 3, 4}), o, {1, 2}, false, c10::nullopt));
  expect_golden("linalg_vector_norm", torch::stack(vn));
  expect_golden("linalg_vector_norm_all_keepdim",
                torch::linalg::vector_norm(S({2, 3, 4}), 3, c10::nullopt, true));
  std::vector<Tensor> mn{torch::linalg::matrix_norm(W({2, 3, 4})),
                         torch::linalg::matrix_norm(W({2, 3, 4}), "nuc")};
  for (double o : {1.0, -1.0, 2.0, -2.0, kInf, -kInf})
    mn.push_back(torch::linalg::matrix_norm(W({2, 3, 4}), o, {-2, -1}, false, c10::nullopt));
  expect_golden("linalg_matrix_norm", torch::stack(mn));
  std::vector<Tensor> md{
      torch::linalg::matrix_norm(W({3, 2, 4}), std::string("fro"), {2, 0}, true, c10::nullopt)
          .flatten(),
      torch::linalg::matrix_norm(W({3, 2, 4}), "nuc", {2, 0}, true).flatten()};
  for (double o : {1.0, -2.0, kInf})
    md.push_back(torch::linalg::matrix_norm(W({3, 2, 4}), o, {2, 0}, true).flatten());
  expect_golden("linalg_matrix_norm_dims_keepdim", torch::cat(md));
  expect_golden(
      "linalg_norm",
      torch::stack({torch::linalg::norm(S({2, 3, 4})), torch::linalg::norm(W({3, 4}), "nuc"),
                    torch::linalg::norm(S({4}), 3, c10::nullopt, false, c10::nullopt),
                    torch::linalg::norm(W({3, 4}), kInf), torch::linalg::norm(W({3, 4}), -2)}));
  expect_golden("linalg_norm_dim", torch::linalg::norm(S({2, 3, 4}), c10::nullopt, {1}, true));
  EXPECT_TRUE(
      torch::linalg::linalg_norm(W({3, 4}), "fro").allclose(torch::linalg::norm(W({3, 4}))));
  // The dtype argument computes in that dtype.
  EXPECT_EQ(
      torch::linalg::vector_norm(S({3}).to(kFloat), 2, c10::nullopt, false, kDouble).scalar_type(),
      kDouble);
  // A complex input's norm is of the magnitudes.
  EXPECT_NEAR(torch::linalg::vector_norm(
                  torch::complex(torch::full({2}, 3.0, kDouble), torch::full({2}, 4.0, kDouble)))
                  .item<double>(),
              std::sqrt(50.0), 1e-12);
}

TEST(LinalgFunctions, MatrixFunctionsMatchPyTorch) {
  Tensor ranks =
      torch::stack({torch::linalg::matrix_rank(S({5, 3})), torch::linalg::matrix_rank(W({5, 3})),
                    torch::linalg::matrix_rank(W({5, 3}), 0.5, c10::nullopt, false),
                    torch::linalg::matrix_rank(W({5, 3}), 0.1, 0.3, false),
                    torch::linalg::matrix_rank(spd(3), c10::nullopt, c10::nullopt, true)});
  EXPECT_EQ(ranks.scalar_type(), kLong);
  expect_golden("linalg_matrix_rank", ranks);
  EXPECT_EQ(torch::linalg::matrix_rank(W({5, 3}), 1e-3, false).item<int64_t>(), 3);
  expect_golden("linalg_pinv_hermitian",
                torch::linalg::pinv(W({3, 3}) + W({3, 3}).mT(), 1e-15, true));
  EXPECT_TRUE(torch::linalg::pinv(W({4, 3})).allclose(torch::pinverse(W({4, 3}))));
  expect_golden("linalg_multi_dot",
                torch::linalg::multi_dot({S({3}), W({3, 4}), W({4, 2}), S({2}, 0.5, 0.3)}));
  expect_golden("linalg_multi_dot_matrices",
                torch::linalg::multi_dot({W({2, 5}), W({5, 3}), W({3, 6}), W({6, 2})}));
  expect_golden("linalg_tensorinv",
                torch::linalg::tensorinv((W({6, 6}) + eye(6) * 2).reshape({6, 2, 3}), 1));
  expect_golden("linalg_tensorsolve",
                torch::linalg::tensorsolve((W({6, 6}) + eye(6) * 2).reshape({2, 3, 6}),
                                           S({2, 3}, 0.5, 0.3), c10::nullopt));
  expect_golden("linalg_tensorsolve_dims",
                torch::linalg::tensorsolve((W({6, 6}) + eye(6) * 2).reshape({6, 2, 3}),
                                           S({2, 3}, 0.5, 0.3), {0}));
  Tensor A = W({3, 3}) + eye(3) * 2;
  EXPECT_TRUE(torch::linalg::inv(A).allclose(torch::inverse(A)));
  EXPECT_TRUE(torch::linalg::det(A).allclose(torch::det(A)));
  EXPECT_TRUE(torch::linalg::linalg_det(A).allclose(torch::det(A)));
  EXPECT_TRUE(std::get<1>(torch::linalg::slogdet(A)).allclose(std::get<1>(torch::slogdet(A))));
  EXPECT_TRUE(torch::linalg::cholesky(spd(3)).allclose(torch::cholesky(spd(3))));
  EXPECT_TRUE(torch::linalg::matrix_power(A, 2).allclose(torch::matmul(A, A)));
  EXPECT_TRUE(torch::linalg::matrix_exp(A * 0).allclose(eye(3)));
  EXPECT_TRUE(torch::linalg::cross(S({2, 3}), W({2, 3}))
                  .allclose(torch::linalg_cross(S({2, 3}), W({2, 3}))));
}

// Float inputs run LAPACK's single-precision routines (as PyTorch): float
// results, within float precision of the double ones.
TEST(LinalgFunctions, FloatInputsComputeInFloat) {
  Tensor A = W({3, 4, 4}) + eye(4) * 3, Af = A.to(kFloat), B = S({3, 4, 2}), Bf = B.to(kFloat);
  auto near = [](const Tensor& f, const Tensor& d) {
    EXPECT_EQ(f.scalar_type(), kFloat);
    EXPECT_TRUE(f.to(kDouble).allclose(d, 1e-4, 1e-5)) << (f.to(kDouble) - d).abs().max();
  };
  near(torch::linalg::inv(Af), torch::linalg::inv(A));
  near(torch::linalg::solve(Af, Bf), torch::linalg::solve(A, B));
  near(torch::linalg::cholesky(torch::matmul(Af, Af.mT())),
       torch::linalg::cholesky(torch::matmul(A, A.mT())));
  near(torch::linalg::svdvals(Af), torch::linalg::svdvals(A));
  near(torch::linalg::eigvalsh(Af + Af.mT()), torch::linalg::eigvalsh(A + A.mT()));
  near(std::get<1>(torch::linalg::qr(Af)), std::get<1>(torch::linalg::qr(A)));
  near(torch::linalg::solve_triangular(torch::triu(Af), Bf, true),
       torch::linalg::solve_triangular(torch::triu(A), B, true));
  near(torch::linalg::det(Af), torch::linalg::det(A));
  // Mixed float and double operands compute in double.
  EXPECT_TRUE(std::get<0>(torch::triangular_solve(B, torch::triu(Af)))
                  .allclose(std::get<0>(torch::triangular_solve(B, torch::triu(A))), 1e-6, 1e-6));
}

// Empty matrices and empty batches give empty results (and det 1, as
// PyTorch), never a LAPACK argument error or a division by zero.
TEST(LinalgFunctions, EmptyMatricesGiveEmptyResults) {
  EXPECT_VALUES(torch::linalg::det(torch::zeros({0, 0})), {1});
  EXPECT_SHAPE(torch::linalg::solve(torch::zeros({0, 0}), torch::zeros({0, 2})), {0, 2});
  EXPECT_SHAPE(torch::linalg::inv(torch::zeros({0, 3, 3})), {0, 3, 3});
  auto [U, S, Vh] = torch::linalg::svd(torch::zeros({2, 3, 0}));
  EXPECT_SHAPE(U, {2, 3, 3});
  EXPECT_SHAPE(S, {2, 0});
  EXPECT_SHAPE(Vh, {2, 0, 0});
  EXPECT_TRUE(torch::matmul(U, U.mT()).allclose(torch::eye(3).expand({2, 3, 3})));
  auto [P, L, Uu] = torch::linalg::lu(torch::zeros({2, 3, 0}));
  EXPECT_SHAPE(P, {2, 3, 3});
  EXPECT_SHAPE(L, {2, 3, 0});
  EXPECT_SHAPE(Uu, {2, 0, 0});
  EXPECT_SHAPE(std::get<0>(torch::linalg::qr(torch::zeros({2, 3, 0}), "complete")), {2, 3, 3});
  auto ls = torch::linalg::lstsq(torch::zeros({2, 3, 0}), torch::ones({2, 3, 2}));
  EXPECT_SHAPE(std::get<0>(ls), {2, 0, 2});
  EXPECT_SHAPE(torch::linalg::pinv(torch::zeros({2, 3, 0})), {2, 0, 3});
  EXPECT_SHAPE(torch::tril(torch::zeros({3, 0})), {3, 0});
  EXPECT_SHAPE(torch::triu(torch::zeros({2, 0, 4})), {2, 0, 4});
  EXPECT_ERROR("cannot compute the inf norm on an empty tensor",
               torch::linalg::vector_norm(torch::zeros({0}), kInf));
  // ldl_solve checks the pivots LAPACK would trust (a zero pivot corrupted memory).
  EXPECT_ERROR(
      "pivots must be in [-3, -1] or [1, 3]",
      torch::linalg::ldl_solve(torch::ones({3, 3}), torch::zeros({3}, kInt), torch::ones({3, 1})));
}

TEST(LinalgFunctions, BadInputGivesPyTorchsErrors) {
  Tensor A = W({5, 3}), B = S({5, 2});
  EXPECT_ERROR("The solver failed because the input matrix is singular",
               torch::linalg::solve(torch::zeros({3, 3}, kDouble), torch::ones({3}, kDouble)));
  EXPECT_ERROR("(Batch element 1): The solver failed",
               torch::linalg::solve(torch::stack({eye(3), torch::zeros({3, 3}, kDouble)}),
                                    torch::ones({3}, kDouble)));
  EXPECT_ERROR("A must be batches of square matrices, but they are 5 by 3",
               torch::linalg::solve(A, B));
  EXPECT_ERROR("Incompatible shapes of A and B for the equation AX = B (3x3 and 5x2)",
               torch::linalg::solve(eye(3), B));
  EXPECT_ERROR("Expected A and B to have the same dtype",
               torch::linalg::solve(eye(3), torch::ones({3}, kFloat)));
  EXPECT_ERROR("parameter `driver` should be one of (gels, gelsy, gelsd, gelss)",
               torch::linalg::lstsq(A, B, c10::nullopt, "foo"));
  EXPECT_ERROR("input.size(-2) should match other.size(-2)", torch::linalg::lstsq(A, S({4, 2})));
  EXPECT_ERROR("linalg.matrix_norm: Order 3 not supported.", torch::linalg::matrix_norm(A, 3));
  EXPECT_ERROR("linalg.matrix_norm: Order abc not supported.",
               torch::linalg::matrix_norm(A, "abc"));
  EXPECT_ERROR("dim must be a 2-tuple", torch::linalg::matrix_norm(A, 2, {0}));
  EXPECT_ERROR("input must be 1D or 2D. Got 3D.",
               torch::linalg::norm(torch::ones({2, 2, 2}, kDouble), 2));
  EXPECT_ERROR("Expected a floating point or complex tensor as input. Got Long",
               torch::linalg::vector_norm(torch::ones({3}, kLong)));
  EXPECT_ERROR("multi_dot(): expected at least 2 tensors but got 1", torch::linalg::multi_dot({A}));
  EXPECT_ERROR("multi_dot(): tensors 0 and 1 with shapes [5, 3] and [5, 3] cannot be multiplied",
               torch::linalg::multi_dot({A, A}));
  EXPECT_ERROR("multi_dot(): the last tensor must be 1D or 2D but got 3D",
               torch::linalg::multi_dot({A.mT(), A, torch::ones({2, 2, 2}, kDouble)}));
  EXPECT_ERROR("but got 12 != 2", torch::linalg::tensorinv(torch::ones({2, 3, 4}, kDouble), 1));
  EXPECT_ERROR("Expected a strictly positive integer for 'ind'", torch::linalg::tensorinv(A, 0));
  EXPECT_ERROR("linalg.eigh: A must be batches of square matrices", torch::linalg::eigh(A));
  EXPECT_ERROR("Expected UPLO argument to be 'L' or 'U', but got X",
               torch::linalg::eigh(eye(3), "X"));
  EXPECT_ERROR("qr received unrecognized mode 'x'", torch::linalg::qr(A, "x"));
  EXPECT_ERROR("keyword argument `driver=` is only supported on CUDA",
               torch::linalg::svd(A, true, "gesvd"));
  EXPECT_ERROR("The factorization could not be completed because the input is singular",
               torch::linalg::ldl_factor(torch::zeros({3, 3}, kDouble)));
  // A loss that depends on the eigenvectors' arbitrary phases.
  Tensor upper = torch::tensor({2.0, 1.0, 0.0, 3.0}, kDouble).view({2, 2}).requires_grad_();
  EXPECT_ERROR(
      "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
      "multiplication by e^{i phi}",
      torch::view_as_real(std::get<1>(torch::linalg::eig(upper))).sum().backward());
  EXPECT_ERROR("linalg.solve_triangular: Incompatible shapes",
               torch::linalg::solve_triangular(eye(3), B, true));
  EXPECT_ERROR("linalg.solve_triangular: B must have at least 2 dimensions",
               torch::linalg::solve_triangular(eye(3), torch::ones({3}, kDouble), true));
  EXPECT_ERROR("torch.linalg.lstsq: Expected input and other to have the same dtype",
               torch::linalg::lstsq(A, B.to(kFloat)));
  EXPECT_ERROR("torch.linalg.lstsq: input.size(-2) should match other.size(-2)",
               torch::linalg::lstsq(A, torch::ones({4, 2}, kDouble)));
  EXPECT_ERROR("linalg.matrix_norm: dims must be different",
               torch::linalg::matrix_norm(A, 2, {0, -2}));
  EXPECT_ERROR("linalg.matrix_norm: The input tensor A must have at least 2 dimensions",
               torch::linalg::matrix_norm(torch::ones({3}, kDouble)));
  EXPECT_ERROR("linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 2]",
               torch::linalg::norm(torch::ones({2, 2, 2}, kDouble), 2, {0, 1, 2}));
  EXPECT_ERROR("it must be of length 2 when ord is a string", torch::linalg::norm(A, "fro", {0}));
  EXPECT_ERROR("the input must be 2D. Got 1D.",
               torch::linalg::norm(torch::ones({3}, kDouble), "nuc"));
  EXPECT_ERROR("Expected UPLO argument to be 'L' or 'U', but got x",
               torch::linalg::eigvalsh(eye(3), "x"));
  EXPECT_ERROR("torch.linalg.svdvals: keyword argument `driver=` is only supported on CUDA",
               torch::linalg::svdvals(A, "gesvd"));
  EXPECT_ERROR("linalg.tensorsolve: A must have at least B's 3 dims",
               torch::linalg::tensorsolve(eye(2), torch::ones({2, 1, 1}, kDouble)));
  EXPECT_ERROR("linalg.tensorinv: ind (3) must be at most the number of dims of A (2)",
               torch::linalg::tensorinv(eye(2), 3));
  EXPECT_ERROR(
      "torch.linalg.ldl_solve: Incompatible shapes of LD and B",
      torch::linalg::ldl_solve(eye(3), torch::ones({3}, kInt), torch::ones({2, 1}, kDouble)));
  EXPECT_ERROR(
      "torch.linalg.ldl_solve: expected int32 pivots of shape [3]",
      torch::linalg::ldl_solve(eye(3), torch::ones({3}, kLong), torch::ones({3, 1}, kDouble)));
  EXPECT_ERROR(
      "torch.linalg.ldl_solve: Expected A and B to have the same dtype",
      torch::linalg::ldl_solve(eye(3), torch::ones({3}, kInt), torch::ones({3, 1}, kFloat)));
  EXPECT_ERROR("linalg.lu: the derivative is implemented for square matrices only",
               std::get<1>(torch::linalg::lu(W({4, 3}).requires_grad_())).sum().backward());
  EXPECT_ERROR("torch.linalg.ldl_factor_ex: the derivative is not implemented",
               torch::linalg::ldl_factor(eye(3).requires_grad_()));
  EXPECT_ERROR("torch.linalg.ldl_solve: the derivative is not implemented",
               torch::linalg::ldl_solve(eye(3), torch::ones({3}, kInt),
                                        torch::ones({3, 1}, kDouble).requires_grad_()));
  // A tensor of tolerances, one per matrix.
  EXPECT_VALUES(torch::linalg::matrix_rank(torch::stack({W({5, 3}), W({5, 3})}),
                                           torch::tensor({1e-3, 1e6}, kDouble), false),
                {3, 0});
}

}  // namespace
