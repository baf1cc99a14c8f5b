#pragma once
// Linear algebra on matrices [..., m, n] (batched over the leading dims):
// determinants, inverses and the LU, Cholesky, QR, SVD and symmetric
// eigenvalue decompositions (LAPACK from OpenBLAS, in float64, each matrix
// in turn), the solvers built on them, and matrix_power / matrix_exp /
// pinverse / nuclear_norm. Every differentiable result has its derivative.
// CUDA tensors make a round trip through host memory (no cuSOLVER yet).
#include <brasa/tensor/tensor.h>

#include <tuple>

namespace brasa {

Tensor det(const Tensor& self);
Tensor logdet(const Tensor& self);  // nan where det < 0, -inf where it is 0
// (sign of det, log |det|)
std::tuple<Tensor, Tensor> slogdet(const Tensor& self);
// An error names the first singular matrix.
Tensor inverse(const Tensor& self);

// L with self = L L^T (or U with self = U^T U); self symmetric positive definite.
Tensor cholesky(const Tensor& self, bool upper = false);
// X with A X = self, for A = L L^T given by its factor.
Tensor cholesky_solve(const Tensor& self, const Tensor& input2, bool upper = false);
// A^-1 for A = L L^T given by its factor.
Tensor cholesky_inverse(const Tensor& self, bool upper = false);
// (X with A X = self (A^T X = self with transpose), a copy of A); A triangular.
std::tuple<Tensor, Tensor> triangular_solve(const Tensor& self, const Tensor& A, bool upper = true,
                                            bool transpose = false, bool unitriangular = false);

// (LU, pivots): P L U = self, L unit lower and U upper packed in LU; the
// pivots are LAPACK's (1-based row swaps, int32).
std::tuple<Tensor, Tensor> linalg_lu_factor(const Tensor& self, bool pivot = true);
// (P, L, U) from linalg_lu_factor's results.
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU_data, const Tensor& LU_pivots,
                                             bool unpack_data = true, bool unpack_pivots = true);
// X with A X = self for A given by linalg_lu_factor.
Tensor lu_solve(const Tensor& self, const Tensor& LU_data, const Tensor& LU_pivots);

// (Q, R): Q with orthonormal columns, R upper triangular; reduced (some) or complete.
std::tuple<Tensor, Tensor> qr(const Tensor& self, bool some = true);
// LAPACK's compact QR (the Householder vectors below R's diagonal, and their
// scales), and Q or Q times a matrix from it. Not differentiable.
std::tuple<Tensor, Tensor> geqrf(const Tensor& self);
Tensor orgqr(const Tensor& self, const Tensor& input2);
Tensor ormqr(const Tensor& self, const Tensor& input2, const Tensor& input3, bool left = true,
             bool transpose = false);

// (U, S, V) with self = U diag(S) V^T, S descending; reduced (some) or complete.
// Without compute_uv, U and V are zeros (and there is no derivative).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& self, bool some = true,
                                       bool compute_uv = true);
// (eigenvalues ascending, eigenvectors as columns) of a symmetric matrix,
// reading its upper (or lower) triangle.
std::tuple<Tensor, Tensor> symeig(const Tensor& self, bool eigenvectors = false, bool upper = true);

// The Moore-Penrose inverse: singular values below rcond times the largest
// count as zero. Its derivative holds where the rank does not change, rank-
// deficient inputs included.
Tensor pinverse(const Tensor& self, double rcond = 1e-15);
namespace detail {
// pinverse, or for a symmetric input (hermitian) by its eigendecomposition.
Tensor pinv(const Tensor& self, double rcond, bool hermitian);
}  // namespace detail
Tensor matrix_power(const Tensor& self, int64_t n);
Tensor matrix_exp(const Tensor& self);
// The sum of the singular values.
Tensor nuclear_norm(const Tensor& self, bool keepdim = false);
Tensor nuclear_norm(const Tensor& self, IntArrayRef dim, bool keepdim = false);

}  // namespace brasa
