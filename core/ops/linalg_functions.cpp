// torch::linalg's functions built from the decompositions: PyTorch's
// spellings, defaults and error messages over ops/decompositions.h and the
// solvers of linalg_solvers.cpp.
#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/decompositions.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/lapack_buffers.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/linalg_functions.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace brasa::linalg {

using lapack_buffers::check_matrix;
using lapack_buffers::mT;

namespace {

double epsilon_of(ScalarType t) {
  return t == kDouble ? std::numeric_limits<double>::epsilon()
                      : std::numeric_limits<float>::epsilon();
}

// A with dims d0 and d1 moved to the end, in that order.
Tensor dims_to_end(const Tensor& A, int64_t d0, int64_t d1) {
  return movedim(movedim(A, d0, -1), d1 < d0 ? d1 : d1 - 1, -1);
}

// Two distinct dims of A, wrapped.
std::pair<int64_t, int64_t> matrix_dims(const char* op, const Tensor& A, IntArrayRef dim) {
  BRASA_CHECK(A.dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  BRASA_CHECK(dim.size() == 2, op, ": dim must be a 2-tuple. Got ", dim);
  const int64_t d0 = maybe_wrap_dim(dim[0], A.dim(), op), d1 = maybe_wrap_dim(dim[1], A.dim(), op);
  BRASA_CHECK(d0 != d1, op, ": dims must be different. Got (", dim[0], ", ", dim[1], ")");
  return {d0, d1};
}

// t reduced over the matrix dims (d0, d1) to [...]: put them back as size-1 dims.
Tensor keep_matrix_dims(Tensor t, int64_t d0, int64_t d1) {
  for (int64_t d : {std::min(d0, d1), std::max(d0, d1)}) t = t.unsqueeze(d);
  return t;
}

void check_norm_input(const char* op, const Tensor& A) {
  BRASA_CHECK(A.defined(), op, ": expected a defined tensor");
  BRASA_CHECK(A.is_floating_point() || A.is_complex(), op,
              ": Expected a floating point or complex tensor as input. Got ", A.scalar_type());
}

// S for the gradient-carrying singular values (svd's backward needs U and V).
Tensor singular_values(const Tensor& A) {
  const bool grad = A.requires_grad() && autograd::GradMode::is_enabled();
  return std::get<1>(brasa::svd(A, true, grad));
}

}  // namespace

Tensor cholesky(const Tensor& A, bool upper) { return brasa::cholesky(A, upper); }
Tensor det(const Tensor& A) { return brasa::det(A); }
Tensor linalg_det(const Tensor& A) { return brasa::det(A); }
std::tuple<Tensor, Tensor> slogdet(const Tensor& A) { return brasa::slogdet(A); }
Tensor inv(const Tensor& A) { return brasa::inverse(A); }
Tensor matrix_exp(const Tensor& A) { return brasa::matrix_exp(A); }
Tensor matrix_power(const Tensor& A, int64_t n) { return brasa::matrix_power(A, n); }
Tensor householder_product(const Tensor& A, const Tensor& tau) { return orgqr(A, tau); }
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) { return linalg_cross(a, b, dim); }

std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view uplo) {
  check_matrix("linalg.eigh", A, true);
  BRASA_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u",
              "linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  return symeig(A, true, uplo == "U" || uplo == "u");
}

Tensor eigvalsh(const Tensor& A, std::string_view uplo) {
  check_matrix("linalg.eigvalsh", A, true);
  BRASA_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u",
              "linalg.eigvalsh: Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  return std::get<0>(symeig(A, false, uplo == "U" || uplo == "u"));
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode) {
  BRASA_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized ",
              "mode '", mode, "' but expected one of 'reduced' (default), 'r', or 'complete'");
  auto [Q, R] = brasa::qr(A, mode != "complete");
  if (mode == "r") return {empty({0}, A.options()), R};
  return {Q, R};
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices,
                                       std::optional<std::string_view> driver) {
  BRASA_CHECK(!driver, "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA ",
              "inputs with cuSOLVER backend.");
  check_matrix("linalg.svd", A, false);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  auto [U, S, V] = brasa::svd(A, true);
  Tensor Vh = mT(V);
  if (!full_matrices || m == n) return {U, S, Vh};
  // Complete U (or Vh) with an orthonormal basis of the rest of the space.
  // Any basis will do, so those columns carry no gradient, as in PyTorch.
  Tensor rest;
  {
    NoGradGuard no_grad;
    Tensor basis = k < m ? U.detach() : V.detach();
    Tensor Q = std::get<0>(brasa::qr(basis, false));
    rest = Q.narrow(-1, k, Q.size(-1) - k);
  }
  if (k < m) return {cat({U, rest}, -1), S, Vh};
  return {U, S, cat({Vh, mT(rest)}, -2)};
}

Tensor svdvals(const Tensor& A, std::optional<std::string_view> driver) {
  BRASA_CHECK(!driver, "torch.linalg.svdvals: keyword argument `driver=` is only supported on ",
              "CUDA inputs with cuSOLVER backend.");
  check_matrix("linalg.svdvals", A, false);
  return singular_values(A);
}

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                        bool unitriangular) {
  check_matrix("linalg.solve_triangular", A, true);
  BRASA_CHECK(B.defined() && B.dim() >= 2, "linalg.solve_triangular: B must have at least 2 ",
              "dimensions, got ", B.defined() ? B.sizes() : IntArrayRef{});
  BRASA_CHECK(A.scalar_type() == B.scalar_type(), "linalg.solve_triangular: Expected A and B ",
              "to have the same dtype, but found A of type ", A.scalar_type(), " and B of type ",
              B.scalar_type(), " instead");
  BRASA_CHECK(left ? B.size(-2) == A.size(-1) : B.size(-1) == A.size(-2),
              "linalg.solve_triangular: Incompatible shapes of A and B for the equation ",
              left ? "AX = B" : "XA = B", " (", A.size(-2), "x", A.size(-1), " and ", B.size(-2),
              "x", B.size(-1), ")");
  if (left) return std::get<0>(triangular_solve(B, A, upper, false, unitriangular));
  // X A = B is A^T X^T = B^T.
  return mT(std::get<0>(triangular_solve(mT(B), A, upper, true, unitriangular)));
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A, const Tensor& B,
                                                 std::optional<double> rcond,
                                                 std::optional<std::string_view> driver) {
  const char* op = "torch.linalg.lstsq";
  check_matrix(op, A, false);
  BRASA_CHECK(B.defined() && B.dim() >= 1, op, ": other must have at least 1 dimension.");
  BRASA_CHECK(A.scalar_type() == B.scalar_type(), op, ": Expected input and other to have the ",
              "same dtype, but got input's dtype ", A.scalar_type(), " and other's dtype ",
              B.scalar_type());
  const std::string_view drv = driver.value_or("gelsy");
  BRASA_CHECK(drv == "gels" || drv == "gelsy" || drv == "gelsd" || drv == "gelss", op,
              ": parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  const bool vector = B.dim() == A.dim() - 1;
  Tensor Bm = vector ? B.unsqueeze(-1) : B;
  BRASA_CHECK(Bm.size(-2) == A.size(-2), op, ": input.size(-2) should match other.size(-2)");
  auto batch = brasa::detail::broadcast_shapes(op, lapack_buffers::batch_shape(A),
                                               lapack_buffers::batch_shape(Bm));
  std::vector<int64_t> a_shape(batch.begin(), batch.end()), b_shape = a_shape;
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  a_shape.insert(a_shape.end(), {m, n});
  b_shape.insert(b_shape.end(), {m, Bm.size(-1)});
  Tensor Ae = A.expand(a_shape), Be = Bm.expand(b_shape);
  const double cutoff_ratio = rcond.value_or(epsilon_of(A.scalar_type()) * std::max(m, n));
  if (!autograd::GradMode::is_enabled() || !(Ae.requires_grad() || Be.requires_grad())) {
    auto [X, residuals, rank, values] =
        detail::lstsq_by_driver(Ae.contiguous(), Be.contiguous(), cutoff_ratio, drv);
    if (vector) {
      X = X.squeeze(-1);
      if (residuals.numel() > 0) residuals = residuals.squeeze(-1);
    }
    return {X, residuals, rank, values};
  }
  // With a derivative: QR (full rank) or the pseudo-inverse, which record theirs.

  // The rank, from the singular values (gels assumes full rank).
  Tensor S, rank;
  bool full_rank = true;
  if (drv != "gels" && k > 0) {
    NoGradGuard no_grad;
    S = singular_values(Ae.detach());
    rank = (S > std::get<0>(S.max(-1, true)) * cutoff_ratio).sum(-1);
    full_rank = (rank == k).all().item<bool>();
  }
  Tensor X;
  if (full_rank || drv == "gels") {
    // Full rank: by QR, the stable path (and its derivative).
    if (m >= n) {
      auto [Q, R] = brasa::qr(Ae, true);
      X = solve_triangular(R, matmul(mT(Q), Be), true);
    } else {
      auto [Q, R] = brasa::qr(mT(Ae), true);
      X = matmul(Q, solve_triangular(mT(R), Be, false));
    }
  } else {
    // The minimum-norm solution, small singular values dropped.
    X = matmul(pinverse(Ae, cutoff_ratio), Be);
  }
  Tensor residuals = empty({0}, A.options());
  if (m > n && drv != "gelsy" && full_rank) residuals = (matmul(Ae, X) - Be).pow(2).sum({-2});
  if (vector) {
    X = X.squeeze(-1);
    if (residuals.numel() > 0) residuals = residuals.squeeze(-1);
  }
  if (drv == "gels" || !rank.defined()) rank = empty({0}, TensorOptions().dtype(kLong));
  Tensor values = (drv == "gelsd" || drv == "gelss") && S.defined() ? S.to(A.scalar_type())
                                                                    : empty({0}, A.options());
  return {X, residuals, rank.to(A.device()), values.to(A.device())};
}

Tensor tensorsolve(const Tensor& A, const Tensor& B, OptionalIntArrayRef dims) {
  BRASA_CHECK(A.defined() && B.defined(), "linalg.tensorsolve: expected defined tensors");
  Tensor a = A;
  if (dims) {
    // Move the given dims of A to its end, keeping their order.
    std::vector<int64_t> order;
    std::vector<bool> moved(A.dim(), false);
    for (int64_t d : *dims) moved[maybe_wrap_dim(d, A.dim(), "linalg.tensorsolve")] = true;
    for (int64_t d = 0; d < A.dim(); ++d)
      if (!moved[d]) order.push_back(d);
    for (int64_t d : *dims) order.push_back(maybe_wrap_dim(d, A.dim(), "linalg.tensorsolve"));
    a = A.permute(order);
  }
  BRASA_CHECK(a.dim() >= B.dim(), "linalg.tensorsolve: A must have at least B's ", B.dim(),
              " dims, got shape ", A.sizes());
  std::vector<int64_t> rest(a.sizes().begin() + B.dim(), a.sizes().end());
  int64_t rest_numel = 1;
  for (int64_t s : rest) rest_numel *= s;
  BRASA_CHECK(rest_numel == B.numel(), "Expected self to satisfy the requirement ",
              "prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got ",
              rest_numel, " != ", B.numel());
  return solve(a.reshape({B.numel(), rest_numel}), B.reshape({B.numel()})).reshape(rest);
}

Tensor tensorinv(const Tensor& A, int64_t ind) {
  BRASA_CHECK(ind > 0, "Expected a strictly positive integer for 'ind', but got ", ind);
  BRASA_CHECK(A.defined() && ind <= A.dim(), "linalg.tensorinv: ind (", ind,
              ") must be at most the number of dims of A (", A.defined() ? A.dim() : 0, ")");
  std::vector<int64_t> head(A.sizes().begin(), A.sizes().begin() + ind),
      tail(A.sizes().begin() + ind, A.sizes().end());
  int64_t p_head = 1, p_tail = 1;
  for (int64_t s : head) p_head *= s;
  for (int64_t s : tail) p_tail *= s;
  BRASA_CHECK(p_head == p_tail, "Expected self to satisfy the requirement prod(self.shape[ind:]) ",
              "== prod(self.shape[:ind]), but got ", p_tail, " != ", p_head);
  std::vector<int64_t> out = tail;
  out.insert(out.end(), head.begin(), head.end());
  return inv(A.reshape({p_head, p_tail})).reshape(out);
}

Tensor pinv(const Tensor& A, double rcond, bool hermitian) {
  return brasa::detail::pinv(A, rcond, hermitian);
}

namespace {
// What matrix_rank counts: the singular values, or for a symmetric input
// the eigenvalues' magnitudes (the same numbers, cheaper).
Tensor rank_spectrum(const Tensor& A, bool hermitian) {
  check_matrix("torch.linalg.matrix_rank", A, hermitian);
  NoGradGuard no_grad;
  return hermitian ? std::get<0>(symeig(A.detach(), false, false)).abs()
                   : std::get<1>(brasa::svd(A.detach(), true, false));
}
}  // namespace

Tensor matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                   bool hermitian) {
  Tensor S = rank_spectrum(A, hermitian);
  if (S.size(-1) == 0) return zeros(S.sizes().slice(0, S.dim() - 1), TensorOptions().dtype(kLong));
  // rtol defaults to eps * max(m, n), or to 0 when only atol is given.
  const double r = rtol.value_or(
      atol && *atol > 0 ? 0.0 : epsilon_of(A.scalar_type()) * std::max(A.size(-2), A.size(-1)));
  Tensor largest = std::get<0>(S.max(-1, true));
  Tensor tol = clamp_min(largest * r, atol.value_or(0.0));
  return (S > tol).sum(-1);
}

Tensor matrix_rank(const Tensor& A, double tol, bool hermitian) {
  return matrix_rank(A, tol, 0.0, hermitian);
}

Tensor matrix_rank(const Tensor& A, const Tensor& tol, bool hermitian) {
  return (rank_spectrum(A, hermitian) > tol.detach().unsqueeze(-1)).sum(-1);
}

Tensor multi_dot(TensorList tensors) {
  const int64_t count = static_cast<int64_t>(tensors.size());
  BRASA_CHECK(count >= 2, "multi_dot(): expected at least 2 tensors but got ", count);
  std::vector<Tensor> mats(tensors.begin(), tensors.end());
  const int64_t first_dim = mats.front().dim(), last_dim = mats.back().dim();
  BRASA_CHECK(first_dim == 1 || first_dim == 2,
              "multi_dot(): the first tensor must be 1D or 2D but got ", first_dim, "D");
  BRASA_CHECK(last_dim == 1 || last_dim == 2,
              "multi_dot(): the last tensor must be 1D or 2D but got ", last_dim, "D");
  if (first_dim == 1) mats.front() = mats.front().unsqueeze(0);
  if (last_dim == 1) mats.back() = mats.back().unsqueeze(-1);
  for (int64_t i = 1; i + 1 < count; ++i)
    BRASA_CHECK(mats[i].dim() == 2, "multi_dot(): tensor ", i, " must be 2D but got ",
                mats[i].dim(), "D");
  for (int64_t i = 0; i + 1 < count; ++i)
    BRASA_CHECK(mats[i].size(1) == mats[i + 1].size(0), "multi_dot(): tensors ", i, " and ", i + 1,
                " with shapes ", tensors[i].sizes(), " and ", tensors[i + 1].sizes(),
                " cannot be multiplied");
  // The cheapest parenthesization by dynamic programming over chain lengths:
  // cost[i][j] multiplications for mats[i..j], split[i][j] where it divides.
  std::vector<int64_t> dims{mats[0].size(0)};
  for (const Tensor& t : mats) dims.push_back(t.size(1));
  std::vector<std::vector<double>> cost(count, std::vector<double>(count, 0));
  std::vector<std::vector<int64_t>> split(count, std::vector<int64_t>(count, 0));
  for (int64_t len = 1; len < count; ++len)
    for (int64_t i = 0; i + len < count; ++i) {
      const int64_t j = i + len;
      cost[i][j] = std::numeric_limits<double>::infinity();
      for (int64_t s = i; s < j; ++s) {
        const double c =
            cost[i][s] + cost[s + 1][j] + static_cast<double>(dims[i]) * dims[s + 1] * dims[j + 1];
        if (c < cost[i][j]) cost[i][j] = c, split[i][j] = s;
      }
    }
  auto product = [&](auto&& self, int64_t i, int64_t j) -> Tensor {
    if (i == j) return mats[i];
    return mm(self(self, i, split[i][j]), self(self, split[i][j] + 1, j));
  };
  Tensor out = product(product, 0, count - 1);
  if (first_dim == 1) out = out.squeeze(0);
  if (last_dim == 1) out = out.squeeze(-1);
  return out;
}

Tensor vector_norm(const Tensor& x, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  check_norm_input("linalg.vector_norm", x);
  Tensor t = dtype ? x.to(*dtype) : x;
  if (t.is_complex()) t = t.abs();
  const double p = ord.toDouble();
  const IntArrayRef dims = dim.value_or(IntArrayRef{});
  if (std::isinf(p) && t.numel() == 0) {
    bool empty_reduction = dims.empty();
    for (int64_t d : dims)
      empty_reduction |= t.size(maybe_wrap_dim(d, t.dim(), "linalg.vector_norm")) == 0;
    BRASA_CHECK(!empty_reduction, "linalg.vector_norm cannot compute the ", ord,
                " norm on an empty tensor because the operation does not have an identity");
  }
  // Negative orders: (sum |x|^p)^(1/p), which brasa::norm does not take.
  if (p < 0 && !std::isinf(p)) return t.abs().pow(p).sum(dims, keepdim).pow(1.0 / p);
  return brasa::norm(t, Scalar(p), dims, keepdim);
}

Tensor matrix_norm(const Tensor& A, const Scalar& ord, IntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  const char* op = "linalg.matrix_norm";
  check_norm_input(op, A);
  auto [d0, d1] = matrix_dims(op, A, dim);
  const double p = ord.toDouble();
  BRASA_CHECK(p == 1 || p == -1 || p == 2 || p == -2 || std::isinf(p), op, ": Order ", ord,
              " not supported.");
  Tensor x = dtype ? A.to(*dtype) : A;
  if (x.is_complex()) x = x.abs();
  Tensor out;
  if (p == 2 || p == -2) {
    Tensor S = singular_values(dims_to_end(x, d0, d1));
    out = p > 0 ? amax(S, {-1}) : amin(S, {-1});
    return keepdim ? keep_matrix_dims(out, d0, d1) : out;
  }
  // 1-norms: the largest column sum (sum over rows d0); inf-norms: the largest row sum.
  const bool one = p == 1 || p == -1;
  Tensor sums = x.abs().sum({one ? d0 : d1}, true);
  out = p > 0 ? amax(sums, {one ? d1 : d0}, true) : amin(sums, {one ? d1 : d0}, true);
  return keepdim ? out : out.squeeze(std::max(d0, d1)).squeeze(std::min(d0, d1));
}

Tensor matrix_norm(const Tensor& A, const std::string& ord, IntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  const char* op = "linalg.matrix_norm";
  check_norm_input(op, A);
  auto [d0, d1] = matrix_dims(op, A, dim);
  BRASA_CHECK(ord == "fro" || ord == "nuc", op, ": Order ", ord, " not supported.");
  if (ord == "fro") return vector_norm(A, 2, IntArrayRef{d0, d1}, keepdim, dtype);
  Tensor x = dtype ? A.to(*dtype) : A;
  if (x.is_complex()) x = x.abs();
  Tensor out = singular_values(dims_to_end(x, d0, d1)).sum({-1});
  return keepdim ? keep_matrix_dims(out, d0, d1) : out;
}

Tensor norm(const Tensor& A, const std::optional<Scalar>& ord, OptionalIntArrayRef dim,
            bool keepdim, std::optional<ScalarType> dtype) {
  check_norm_input("linalg.norm", A);
  if (dim) {
    BRASA_CHECK(dim->size() == 1 || dim->size() == 2, "linalg.norm: If dim is specified, it must ",
                "be of length 1 or 2. Got ", *dim);
    if (dim->size() == 1) return vector_norm(A, ord.value_or(2), dim, keepdim, dtype);
    return ord ? matrix_norm(A, *ord, *dim, keepdim, dtype)
               : matrix_norm(A, std::string("fro"), *dim, keepdim, dtype);
  }
  if (!ord) return vector_norm(A, 2, std::nullopt, keepdim, dtype);
  BRASA_CHECK(A.dim() == 1 || A.dim() == 2, "linalg.norm: If dim is not specified but ord is, ",
              "the input must be 1D or 2D. Got ", A.dim(), "D.");
  return A.dim() == 1 ? vector_norm(A, *ord, std::nullopt, keepdim, dtype)
                      : matrix_norm(A, *ord, {-2, -1}, keepdim, dtype);
}

Tensor norm(const Tensor& A, std::string_view ord, OptionalIntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  check_norm_input("linalg.norm", A);
  if (dim) {
    BRASA_CHECK(dim->size() == 2, "linalg.norm: If dim is specified, it must be of length 2 ",
                "when ord is a string (", ord, "). Got ", *dim);
    return matrix_norm(A, std::string(ord), *dim, keepdim, dtype);
  }
  BRASA_CHECK(A.dim() == 2, "linalg.norm: If dim is not specified but ord is, the input must be ",
              "2D. Got ", A.dim(), "D.");
  return matrix_norm(A, std::string(ord), {-2, -1}, keepdim, dtype);
}

Tensor linalg_norm(const Tensor& A, const std::optional<Scalar>& ord, OptionalIntArrayRef dim,
                   bool keepdim, std::optional<ScalarType> dtype) {
  return norm(A, ord, dim, keepdim, dtype);
}
Tensor linalg_norm(const Tensor& A, std::string_view ord, OptionalIntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  return norm(A, ord, dim, keepdim, dtype);
}

}  // namespace brasa::linalg
