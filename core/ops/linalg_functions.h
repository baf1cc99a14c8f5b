#pragma once
// torch::linalg: libtorch's linear-algebra namespace (torch/linalg.h), with
// PyTorch's names, argument orders, defaults and conventions — svd returns
// Vh (not V) and defaults to full matrices, eigh reads the lower triangle,
// qr takes a mode string, norms take ord / dim / keepdim / dtype. Built on
// the decompositions of ops/decompositions.h (LAPACK in float64). Every
// result PyTorch differentiates is differentiable here too; the LDL factors
// are not differentiable in PyTorch either.
#include <brasa/tensor/tensor.h>
#include <brasa/util/optional_array_ref.h>

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace brasa::linalg {

// Factorizations and their inverses.
Tensor cholesky(const Tensor& A, bool upper = false);
Tensor det(const Tensor& A);
Tensor linalg_det(const Tensor& A);
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);  // (sign, logabsdet)
Tensor inv(const Tensor& A);
// (eigenvalues, eigenvectors as columns) of a general square matrix, complex
// (complex64 for float input, complex128 for double), as LAPACK's geev gives
// them: each eigenvector of unit norm. Differentiable for losses that do not
// depend on the eigenvectors' phases (others are an error, as in PyTorch).
std::tuple<Tensor, Tensor> eig(const Tensor& A);
Tensor eigvals(const Tensor& A);
// A symmetric matrix's eigenvalues (ascending) and eigenvectors, reading the
// lower ("L") or upper ("U") triangle.
std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view uplo = "L");
Tensor eigvalsh(const Tensor& A, std::string_view uplo = "L");
// The first n columns of the product of the Householder reflectors in A's
// columns with scales tau (LAPACK's orgqr).
Tensor householder_product(const Tensor& A, const Tensor& tau);
// (LU, pivots), LAPACK's compact form; pivots are 1-based int32 row swaps.
std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot = true);
// (P, L, U) with A = P L U; differentiable for square A.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot = true);
// (LD, pivots, info): A = L D L^T by Bunch-Kaufman (LAPACK's sytrf, lower
// triangle). info > 0 marks a singular D; with check_errors it is an error.
std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A, bool hermitian = false,
                                                 bool check_errors = false);
std::tuple<Tensor, Tensor> ldl_factor(const Tensor& A, bool hermitian = false);
// X with A X = B for A given by ldl_factor.
Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian = false);
// (Q, R); mode "reduced" (default), "complete", or "r" (Q empty).
std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode = "reduced");
// (U, S, Vh) with A = U diag(S) Vh. With full_matrices, U and Vh are square
// and their columns / rows past min(m, n) get no gradient (as PyTorch).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true,
                                       std::optional<std::string_view> driver = std::nullopt);
Tensor svdvals(const Tensor& A, std::optional<std::string_view> driver = std::nullopt);

// Solvers. B is a batch of vectors when it is 1-D or has A's shape without its last dim.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
// (X, info): info [batch] int32, > 0 where A is singular (X is then not finite);
// with check_errors, a singular A is an error as in solve.
std::tuple<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left = true,
                                    bool check_errors = false);
// X with A X = B (X A = B when !left), A triangular.
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true,
                        bool unitriangular = false);
// (solution, residuals, rank, singular_values) of min ||A X - B||. Drivers:
// "gels" (QR, A of full rank), "gelsy" (default), "gelsd", "gelss" (the
// minimum-norm solution; singular values below rcond * the largest count as
// zero, rcond defaulting to eps * max(m, n)). Which extra results are filled
// follows PyTorch: residuals for m > n and full rank except with gelsy, rank
// except with gels, singular values with gelsd and gelss; the rest are empty.
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(
    const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
    std::optional<std::string_view> driver = std::nullopt);
// X with tensordot(A, X, X.dim()) = B; dims of A moved to its end first.
Tensor tensorsolve(const Tensor& A, const Tensor& B, OptionalIntArrayRef dims = std::nullopt);
// The inverse of A read as a matrix [prod(shape[:ind]), prod(shape[ind:])].
Tensor tensorinv(const Tensor& A, int64_t ind = 2);

// Matrix functions.
Tensor matrix_exp(const Tensor& A);
Tensor matrix_power(const Tensor& A, int64_t n);
// The Moore-Penrose inverse; singular values below rcond * the largest count as zero.
Tensor pinv(const Tensor& A, double rcond = 1e-15, bool hermitian = false);
// The number of singular values above max(atol, rtol * the largest); without
// either, rtol = eps * max(m, n). The (tol, hermitian) forms take tol as atol
// (as in libtorch, a call (A, 0.1, 0.3) means tol 0.1, hermitian: pass all four).
Tensor matrix_rank(const Tensor& A, std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt, bool hermitian = false);
Tensor matrix_rank(const Tensor& A, double tol, bool hermitian = false);
Tensor matrix_rank(const Tensor& A, const Tensor& tol, bool hermitian = false);
// The product of 2 or more matrices in the cheapest order; the first may be
// a row vector (1-D) and the last a column vector.
Tensor multi_dot(TensorList tensors);
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1);

// Norms. vector_norm: (sum |x|^ord)^(1/ord) over dim (all dims when none),
// with ord = inf / -inf the largest / smallest |x| and 0 the count of nonzeros.
Tensor vector_norm(const Tensor& x, const Scalar& ord = 2, OptionalIntArrayRef dim = std::nullopt,
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
// ord: "fro", "nuc", inf, -inf, 1, -1, 2, -2 over the two dims.
Tensor matrix_norm(const Tensor& A, const Scalar& ord, IntArrayRef dim = {-2, -1},
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor matrix_norm(const Tensor& A, const std::string& ord = "fro", IntArrayRef dim = {-2, -1},
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
// A string literal ord ("fro"): without this, a literal converts as well to
// a Scalar (through bool) as to a string.
template <size_t N>
Tensor matrix_norm(const Tensor& A, const char (&ord)[N], IntArrayRef dim = {-2, -1},
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  return matrix_norm(A, std::string(ord), dim, keepdim, dtype);
}
// A vector norm over one dim, a matrix norm over two; without dim, the
// 2-norm of the flattened input when ord is absent, else of a 1-D or 2-D input.
Tensor norm(const Tensor& A, const std::optional<Scalar>& ord = std::nullopt,
            OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor norm(const Tensor& A, std::string_view ord, OptionalIntArrayRef dim = std::nullopt,
            bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
template <size_t N>
Tensor norm(const Tensor& A, const char (&ord)[N], OptionalIntArrayRef dim = std::nullopt,
            bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  return norm(A, std::string_view(ord), dim, keepdim, dtype);
}
Tensor linalg_norm(const Tensor& A, const std::optional<Scalar>& ord = std::nullopt,
                   OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
Tensor linalg_norm(const Tensor& A, std::string_view ord, OptionalIntArrayRef dim = std::nullopt,
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
template <size_t N>
Tensor linalg_norm(const Tensor& A, const char (&ord)[N], OptionalIntArrayRef dim = std::nullopt,
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  return norm(A, std::string_view(ord), dim, keepdim, dtype);
}

namespace detail {
// lstsq without a derivative: LAPACK's driver itself on A [..., m, n] and
// B [..., m, k] whose batch dims already agree.
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq_by_driver(const Tensor& A, const Tensor& B,
                                                           double rcond, std::string_view driver);
}  // namespace detail

}  // namespace brasa::linalg
