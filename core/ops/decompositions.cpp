#include <brasa/autograd/record.h>
#include <brasa/autograd/grad_mode.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/cpu/lapack.h>
#include <brasa/ops/decompositions.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/lapack_buffers.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace brasa {

using namespace lapack_buffers;

namespace {

const autograd::BackwardName kInverseBackward("LinalgInvExBackward0");
const autograd::BackwardName kDetBackward("LinalgDetBackward0");
const autograd::BackwardName kSlogdetBackward("LinalgSlogdetBackward0");
const autograd::BackwardName kCholeskyBackward("LinalgCholeskyExBackward0");
const autograd::BackwardName kTriangularSolveBackward("TriangularSolveBackward0");
const autograd::BackwardName kQrBackward("LinalgQrBackward0");
const autograd::BackwardName kSvdBackward("LinalgSvdBackward0");
const autograd::BackwardName kSymeigBackward("LinalgEighBackward0");
const autograd::BackwardName kPinvBackward("LinalgPinvBackward0");

// (sign, log|det|) of each square matrix by LU, as float64 CPU tensors [count].
std::pair<Tensor, Tensor> sign_logabsdet(const Tensor& A) {
  Tensor cm = column_major(A, kDouble), piv;  // in double: a product of n pivots
  lu_in_place("slogdet", cm, piv);
  const int64_t count = batch_count(cm), n = cm.size(-1);
  Tensor sign = empty({count}, TensorOptions().dtype(kDouble)),
         logabs = empty({count}, TensorOptions().dtype(kDouble));
  const double* a = cm.data_ptr<double>();
  for (int64_t b = 0; b < count; ++b) {
    double s = 1, l = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double u = a[b * n * n + i * n + i];
      if (piv.data_ptr<int32_t>()[b * n + i] != i + 1) s = -s;
      if (u < 0) s = -s;
      l += std::log(std::abs(u));
    }
    if (std::isinf(l) && l < 0) s = 0;
    sign.data_ptr<double>()[b] = s;
    logabs.data_ptr<double>()[b] = l;
  }
  return {sign, logabs};
}
Tensor unsqueeze2(const Tensor& t) { return t.unsqueeze(-1).unsqueeze(-1); }

}  // namespace

Tensor inverse(const Tensor& self) {
  check_matrix("linalg.inv", self, true);
  autograd::Recorder r(kInverseBackward, self);
  Tensor cm = column_major(self), piv;
  std::vector<int> infos = lu_in_place("linalg.inv", cm, piv);
  const int64_t count = batch_count(cm);
  const int n = lapack_int("linalg.inv", self.size(-1));
  for (int64_t b = 0; b < count; ++b)
    BRASA_CHECK(infos[b] == 0, "linalg.inv", batch_name(b, count), ": The diagonal element ",
                infos[b], " is zero, the inversion could not be completed because the input ",
                "matrix is singular.");
  if (n > 0)
    dispatch_real(cm.scalar_type(), [&](auto zero) {
      using T = decltype(zero);
      int lwork = -1, info = 0;
      T query = 0;
      lapack::getri(&n, cm.data_ptr<T>(), &n, piv.data_ptr<int32_t>(), &query, &lwork, &info);
      lwork = std::max(1, static_cast<int>(query));
      std::vector<T> work(lwork);
      for (int64_t b = 0; b < count; ++b) {
        lapack::getri(&n, cm.data_ptr<T>() + b * n * n, &n, piv.data_ptr<int32_t>() + b * n,
                      work.data(), &lwork, &info);
        BRASA_CHECK(info == 0, "linalg.inv: LAPACK getri failed with info ", info);
      }
    });
  Tensor y = from_column_major(cm, self);
  if (r)
    r.save(y).finish(y, [](autograd::FormulaNode& node, const autograd::variable_list& g) {
      Tensor yt = mT(node.saved(0));
      return autograd::variable_list{-matmul(matmul(yt, g[0]), yt)};
    });
  return y;
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& self) {
  check_matrix("linalg.slogdet", self, true);
  autograd::Recorder r(kSlogdetBackward, self);
  auto [s, l] = sign_logabsdet(self);
  auto shape = batch_shape(self);
  Tensor sign = s.reshape(shape).to(self.scalar_type()).to(self.device());
  Tensor logabs = l.reshape(shape).to(self.scalar_type()).to(self.device());
  if (r)
    r.save(self).finish(
        {sign, logabs}, [](autograd::FormulaNode& node, const autograd::variable_list& g) {
          // d log|det A| = tr(A^-1 dA)
          return autograd::variable_list{unsqueeze2(g[1]) * mT(inverse(node.saved(0)))};
        });
  return {sign, logabs};
}

Tensor logdet(const Tensor& self) {
  auto [sign, logabs] = slogdet(self);
  return where(sign < 0, full_like(logabs, NAN), logabs);
}

Tensor det(const Tensor& self) {
  check_matrix("linalg.det", self, true);
  autograd::Recorder r(kDetBackward, self);
  auto [s, l] = sign_logabsdet(self);
  Tensor d = (s * l.exp()).reshape(batch_shape(self)).to(self.scalar_type()).to(self.device());
  if (r)
    r.save(self, d).finish(d, [](autograd::FormulaNode& node, const autograd::variable_list& g) {
      Tensor A = node.saved(0), d = node.saved(1);
      if ((d != 0).all().item<bool>())  // d det A = det A tr(A^-1 dA)
        return autograd::variable_list{unsqueeze2(g[0] * d) * mT(inverse(A))};
      // A singular one: the adjugate through the SVD, A = U S V^T:
      // adj(A)^T = det(U) det(V) U diag(prod_{j != i} s_j) V^T.
      NoGradGuard ng;
      auto [U, S, V] = svd(A);
      const int64_t n = S.size(-1);
      Tensor others = ones_like(S);
      for (int64_t i = 0; i < n; ++i) {
        Tensor mask = ones_like(S);
        mask.select(-1, i).fill_(0);
        others.select(-1, i).copy_((S * mask + (1 - mask)).prod(-1));
      }
      Tensor uv_sign = unsqueeze2(det(U) * det(V));
      Tensor adj_t = uv_sign * matmul(U * others.unsqueeze(-2), mT(V));
      return autograd::variable_list{unsqueeze2(g[0]) * adj_t};
    });
  return d;
}

Tensor cholesky(const Tensor& self, bool upper) {
  check_matrix("linalg.cholesky", self, true);
  autograd::Recorder r(kCholeskyBackward, self);
  Tensor cm = column_major(self);
  const int64_t count = batch_count(cm);
  const int n = lapack_int("linalg.cholesky", self.size(-1));
  const char lower = 'L';
  dispatch_real(cm.scalar_type(), [&](auto zero) {
    using T = decltype(zero);
    for (int64_t b = 0; b < count && n > 0; ++b) {
      int info = 0;
      lapack::potrf(&lower, &n, cm.data_ptr<T>() + b * n * n, &n, &info, lapack::kOne);
      BRASA_CHECK(info == 0, "linalg.cholesky", batch_name(b, count),
                  ": The factorization could not be completed because the input is not ",
                  "positive-definite (the leading minor of order ", info,
                  " is not positive-definite).");
    }
  });
  Tensor L = tril(from_column_major(cm, self));
  if (r)
    r.save(L).finish(L, [](autograd::FormulaNode& node, const autograd::variable_list& g) {
      // gA = L^-T phi(L^T gL) L^-1, symmetrized; phi keeps the lower
      // triangle with its diagonal halved.
      Tensor L = node.saved(0);
      Tensor P = tril(matmul(mT(L), g[0]));
      P = P - diag_embed(P.diagonal(0, -2, -1) * 0.5);
      Tensor Linv = inverse(L);
      Tensor S = matmul(matmul(mT(Linv), P), Linv);
      return autograd::variable_list{(S + mT(S)) * 0.5};
    });
  return upper ? mT(L) : L;
}

std::tuple<Tensor, Tensor> triangular_solve(const Tensor& self, const Tensor& A, bool upper,
                                            bool transpose, bool unitriangular) {
  check_matrix("triangular_solve", A, true);
  check_matrix("triangular_solve", self, false);
  BRASA_CHECK(self.size(-2) == A.size(-1), "triangular_solve: Incompatible matrix sizes for ",
              "A X = B: A is ", A.size(-2), " by ", A.size(-1), " and B is ", self.size(-2), " by ",
              self.size(-1));
  // Broadcast the batch dims.
  auto ab = batch_shape(A), bb = batch_shape(self);
  DimVector common = detail::broadcast_shapes("triangular_solve", ab, bb);
  std::vector<int64_t> a_shape(common.begin(), common.end()), b_shape = a_shape;
  a_shape.insert(a_shape.end(), {A.size(-2), A.size(-1)});
  b_shape.insert(b_shape.end(), {self.size(-2), self.size(-1)});
  Tensor Ae = A.expand(a_shape), Be = self.expand(b_shape);
  autograd::Recorder r(kTriangularSolveBackward, Be, Ae);
  const ScalarType type = working_type(Ae, Be);
  Tensor acm = column_major(Ae, type), bcm = column_major(Be, type);
  const int64_t count = batch_count(acm);
  const int n = lapack_int("triangular_solve", A.size(-1)),
            k = lapack_int("triangular_solve", self.size(-1));
  const char uplo = upper ? 'U' : 'L', trans = transpose ? 'T' : 'N',
             diag = unitriangular ? 'U' : 'N';
  dispatch_real(type, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t b = 0; b < count && n > 0 && k > 0; ++b) {
      int info = 0;
      lapack::trtrs(&uplo, &trans, &diag, &n, &k, acm.data_ptr<T>() + b * n * n, &n,
                    bcm.data_ptr<T>() + b * n * k, &n, &info, lapack::kOne, lapack::kOne,
                    lapack::kOne);
      BRASA_CHECK(info == 0, "triangular_solve", batch_name(b, count), ": The diagonal element ",
                  info, " is zero, the solve could not be completed because the input matrix is ",
                  "singular.");
    }
  });
  Tensor X = from_column_major(bcm, self);
  if (r)
    r.save(Ae, X).finish(X, [upper, transpose, unitriangular](autograd::FormulaNode& node,
                                                              const autograd::variable_list& g) {
      Tensor A = node.saved(0), X = node.saved(1);
      Tensor gB = std::get<0>(triangular_solve(g[0], A, upper, !transpose, unitriangular));
      Tensor gA = transpose ? -matmul(X, mT(gB)) : -matmul(gB, mT(X));
      const int64_t off = unitriangular ? 1 : 0;
      gA = upper ? triu(gA, off) : tril(gA, -off);
      return autograd::variable_list{gB, gA};
    });
  return {X, Ae.clone()};
}

Tensor cholesky_solve(const Tensor& self, const Tensor& input2, bool upper) {
  check_matrix("cholesky_solve", input2, true);
  // A = L L^T: X = L^-T (L^-1 B); with upper, A = U^T U: X = U^-1 (U^-T B).
  Tensor y = std::get<0>(triangular_solve(self, input2, upper, upper));
  return std::get<0>(triangular_solve(y, input2, upper, !upper));
}

Tensor cholesky_inverse(const Tensor& self, bool upper) {
  check_matrix("cholesky_inverse", self, true);
  Tensor eye_n = eye(self.size(-1), self.options());
  return cholesky_solve(eye_n.expand(self.sizes()), self, upper);
}

std::tuple<Tensor, Tensor> linalg_lu_factor(const Tensor& self, bool pivot) {
  check_matrix("linalg.lu_factor", self, false);
  BRASA_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  BRASA_CHECK(!self.requires_grad() || !autograd::GradMode::is_enabled(),
              "linalg.lu_factor: the derivative is not implemented (lu_solve and lu_unpack of ",
              "its results are differentiable in the LU data)");
  Tensor cm = column_major(self), piv;
  lu_in_place("linalg.lu_factor", cm, piv);
  std::vector<int64_t> pshape = batch_shape(self);
  pshape.push_back(std::min(self.size(-2), self.size(-1)));
  return {from_column_major(cm, self), piv.reshape(pshape).to(self.device())};
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU_data, const Tensor& LU_pivots,
                                             bool unpack_data, bool unpack_pivots) {
  check_matrix("lu_unpack", LU_data, false);
  const int64_t m = LU_data.size(-2), n = LU_data.size(-1), k = std::min(m, n);
  BRASA_CHECK(LU_pivots.defined() && LU_pivots.scalar_type() == kInt &&
                  LU_pivots.dim() == LU_data.dim() - 1 && LU_pivots.size(-1) == k,
              "lu_unpack: expected int32 LU_pivots of shape [..., ", k, "], got ",
              LU_pivots.defined() ? LU_pivots.sizes() : IntArrayRef{});
  Tensor L, U, P;
  if (unpack_data) {
    L = tril(LU_data.narrow(-1, 0, k), -1) + eye(m, k, LU_data.options());
    U = triu(LU_data.narrow(-2, 0, k));
  }
  if (unpack_pivots) {
    Tensor piv = LU_pivots.to(kCPU).contiguous();
    const int64_t count = batch_count(LU_data);
    Tensor p = zeros({count, m, m}, TensorOptions().dtype(kDouble));
    for (int64_t b = 0; b < count; ++b) {
      std::vector<int64_t> perm(m);
      for (int64_t i = 0; i < m; ++i) perm[i] = i;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t to = piv.data_ptr<int32_t>()[b * k + i] - 1;
        BRASA_CHECK(to >= 0 && to < m, "lu_unpack: pivot ", to + 1, " out of range [1, ", m, "]");
        std::swap(perm[i], perm[to]);
      }
      // A = P L U: row perm[i] of A is row i of L U.
      for (int64_t i = 0; i < m; ++i) p.data_ptr<double>()[b * m * m + perm[i] * m + i] = 1;
    }
    std::vector<int64_t> shape = batch_shape(LU_data);
    shape.insert(shape.end(), {m, m});
    P = p.reshape(shape).to(LU_data.scalar_type()).to(LU_data.device());
  }
  return {P, L, U};
}

Tensor lu_solve(const Tensor& self, const Tensor& LU_data, const Tensor& LU_pivots) {
  check_matrix("lu_solve", LU_data, true);
  auto [P, L, U] = lu_unpack(LU_data, LU_pivots);
  // A = P L U: X = U^-1 L^-1 P^T B.
  Tensor y = std::get<0>(triangular_solve(matmul(mT(P), self), L, false, false, true));
  return std::get<0>(triangular_solve(y, U, true));
}

namespace {
// Householder QR of each column-major m x n buffer in place; tau [count, k].
Tensor householder_in_place(const char* op, Tensor& cm) {
  const int64_t count = batch_count(cm);
  const int m = lapack_int(op, cm.size(-1)), n = lapack_int(op, cm.size(-2)), k = std::min(m, n);
  Tensor tau = zeros({count, k}, TensorOptions().dtype(cm.scalar_type()));
  if (m == 0 || n == 0) return tau;
  dispatch_real(cm.scalar_type(), [&](auto zero) {
    using T = decltype(zero);
    int lwork = -1, info = 0;
    T query = 0;
    lapack::geqrf(&m, &n, cm.data_ptr<T>(), &m, tau.data_ptr<T>(), &query, &lwork, &info);
    lwork = std::max(1, static_cast<int>(query));
    std::vector<T> work(lwork);
    for (int64_t b = 0; b < count; ++b) {
      lapack::geqrf(&m, &n, cm.data_ptr<T>() + b * m * n, &m, tau.data_ptr<T>() + b * k,
                    work.data(), &lwork, &info);
      BRASA_CHECK(info == 0, op, ": LAPACK geqrf failed with info ", info);
    }
  });
  return tau;
}
// Q's first `cols` columns from the reflectors in the first k columns of
// each column-major m x (>= cols) buffer, in place.
void form_q_in_place(const char* op, Tensor& cm, const Tensor& tau, int cols) {
  const int64_t count = batch_count(cm);
  const int m = lapack_int(op, cm.size(-1)), stride = lapack_int(op, cm.size(-2)),
            k = lapack_int(op, tau.size(-1));
  if (m == 0 || cols == 0) return;
  dispatch_real(cm.scalar_type(), [&](auto zero) {
    using T = decltype(zero);
    int lwork = -1, info = 0;
    T query = 0;
    lapack::orgqr(&m, &cols, &k, cm.data_ptr<T>(), &m, tau.data_ptr<T>(), &query, &lwork, &info);
    lwork = std::max(1, static_cast<int>(query));
    std::vector<T> work(lwork);
    for (int64_t b = 0; b < count; ++b) {
      lapack::orgqr(&m, &cols, &k, cm.data_ptr<T>() + b * m * stride, &m, tau.data_ptr<T>() + b * k,
                    work.data(), &lwork, &info);
      BRASA_CHECK(info == 0, op, ": LAPACK orgqr failed with info ", info);
    }
  });
}
void check_no_grad(const char* op, std::initializer_list<Tensor> ts) {
  for (const Tensor& t : ts)
    BRASA_CHECK(!t.defined() || !t.requires_grad() || !autograd::GradMode::is_enabled(), op,
                ": the derivative is not implemented");
}
// Q C (or Q^T C) for Q = H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^T, v_i
// being column i of A below the diagonal with 1 on it (A's upper triangle is
// not read), written with differentiable ops so that autograd derives
// householder_product and ormqr. Each reflector costs O(m n), as in LAPACK;
// used only when a gradient is wanted.
Tensor apply_reflectors(const Tensor& A, const Tensor& tau, Tensor C, bool transpose) {
  const int64_t m = A.size(-2), k = tau.size(-1);
  Tensor rows = arange(m, TensorOptions().dtype(kLong).device(A.device()));
  auto reflect = [&](int64_t i) {
    Tensor below = rows.gt(i).to(A.scalar_type()), diagonal = rows.eq(i).to(A.scalar_type());
    Tensor v = (A.select(-1, i) * below + diagonal).unsqueeze(-1);  // [..., m, 1]
    Tensor scaled_v = v * tau.select(-1, i).unsqueeze(-1).unsqueeze(-1);
    C = C - matmul(scaled_v, matmul(v.transpose(-2, -1), C));
  };
  if (transpose)
    for (int64_t i = 0; i < k; ++i) reflect(i);
  else
    for (int64_t i = k - 1; i >= 0; --i) reflect(i);
  return C;
}
}  // namespace

std::tuple<Tensor, Tensor> qr(const Tensor& self, bool some) {
  check_matrix("linalg.qr", self, false);
  autograd::Recorder r(kQrBackward, self);
  const int64_t m = self.size(-2), n = self.size(-1), k = std::min(m, n);
  const int64_t qcols = some ? k : m;
  Tensor cm = column_major(self);
  Tensor tau = householder_in_place("linalg.qr", cm);
  Tensor R = triu(from_column_major(cm, self).narrow(-2, 0, qcols));
  // Q needs m x qcols storage: the reflectors, widened with zeros when complete and n < m.
  Tensor qbuf = cm.narrow(-2, 0, std::min(qcols, n)).contiguous();
  if (qcols > n) {
    auto extra = cm.sizes().vec();
    extra[extra.size() - 2] = qcols - n;
    qbuf = cat({qbuf, zeros(extra, cm.options())}, -2).contiguous();
  }
  form_q_in_place("linalg.qr", qbuf, tau, static_cast<int>(qcols));
  Tensor Q = from_column_major(qbuf, self);
  if (r)
    r.save(Q, R).finish(
        {Q, R}, [m, n, some](autograd::FormulaNode& node, const autograd::variable_list& g) {
          BRASA_CHECK(m >= n && (some || m == n),
                      "linalg.qr: the derivative is implemented for inputs with at least as many ",
                      "rows as columns, in reduced mode (some=true) or for square inputs");
          Tensor Q = node.saved(0), R = node.saved(1), gQ = g[0], gR = g[1];
          Tensor qdq = matmul(mT(Q), gQ), rdr = matmul(R, mT(gR));
          Tensor M = tril(qdq - mT(qdq) + rdr - mT(rdr));
          // x R^-T, as the solve R Y = x^T transposed back.
          auto times_r_inv_t = [&](const Tensor& x) {
            return mT(std::get<0>(triangular_solve(mT(x), R, true)));
          };
          Tensor gA = matmul(Q, gR + times_r_inv_t(M)) + times_r_inv_t(gQ - matmul(Q, qdq));
          return autograd::variable_list{gA};
        });
  return {Q, R};
}

std::tuple<Tensor, Tensor> geqrf(const Tensor& self) {
  check_matrix("geqrf", self, false);
  check_no_grad("geqrf", {self});
  Tensor cm = column_major(self);
  Tensor tau = householder_in_place("geqrf", cm);
  std::vector<int64_t> tshape = batch_shape(self);
  tshape.push_back(tau.size(-1));
  return {from_column_major(cm, self),
          tau.reshape(tshape).to(self.scalar_type()).to(self.device())};
}

Tensor orgqr(const Tensor& self, const Tensor& input2) {
  check_matrix("orgqr", self, false);
  BRASA_CHECK(self.size(-2) >= self.size(-1), "orgqr: input.shape[-2] must be greater than or ",
              "equal to input.shape[-1], got ", self.sizes());
  BRASA_CHECK(input2.defined() && input2.size(-1) <= self.size(-1),
              "orgqr: tau.shape[-1] must be less than or equal to input.shape[-1]");
  std::vector<int64_t> tau_batch = input2.sizes().vec();
  tau_batch.pop_back();
  BRASA_CHECK(tau_batch == batch_shape(self), "orgqr: tau's batch dims ", input2.sizes(),
              " must equal input's ", self.sizes());
  if (autograd::needs_grad(self, input2)) {
    BRASA_CHECK(input2.scalar_type() == self.scalar_type(), "orgqr: tau's dtype ",
                input2.scalar_type(), " must equal input's ", self.scalar_type());
    Tensor identity = eye(self.size(-2), self.size(-1), self.options()).expand(self.sizes());
    return apply_reflectors(self, input2, identity, false);
  }
  Tensor cm = column_major(self);
  Tensor tau = input2.detach()
                   .to(kCPU)
                   .to(cm.scalar_type())
                   .reshape({batch_count(cm), input2.size(-1)})
                   .contiguous();
  form_q_in_place("orgqr", cm, tau, static_cast<int>(self.size(-1)));
  return from_column_major(cm, self);
}

Tensor ormqr(const Tensor& self, const Tensor& input2, const Tensor& input3, bool left,
             bool transpose) {
  check_matrix("ormqr", self, false);
  check_matrix("ormqr", input3, false);
  const int64_t count = batch_count(self);
  BRASA_CHECK(batch_count(input3) == count && input2.defined(),
              "ormqr: input, tau and other must have the same batch dims");
  BRASA_CHECK(self.size(-2) == (left ? input3.size(-2) : input3.size(-1)),
              "ormqr: input.shape[-2] (", self.size(-2), ") must equal other.shape[",
              left ? -2 : -1, "] (", left ? input3.size(-2) : input3.size(-1), ")");
  BRASA_CHECK(input2.size(-1) <= self.size(-1),
              "ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]");
  if (autograd::needs_grad(self, input2, input3)) {
    BRASA_CHECK(
        input2.scalar_type() == self.scalar_type() && input3.scalar_type() == self.scalar_type(),
        "ormqr: input, tau and other must have one dtype, got ", self.scalar_type(), ", ",
        input2.scalar_type(), " and ", input3.scalar_type());
    // C Q = (Q^T C^T)^T and C Q^T = (Q C^T)^T.
    if (left) return apply_reflectors(self, input2, input3, transpose);
    return apply_reflectors(self, input2, input3.transpose(-2, -1), !transpose).transpose(-2, -1);
  }
  Tensor a = column_major(self, kDouble), c = column_major(input3, kDouble);
  Tensor tau = input2.detach().to(kCPU).to(kDouble).reshape({count, input2.size(-1)}).contiguous();
  const int m = lapack_int("ormqr", input3.size(-2)), n = lapack_int("ormqr", input3.size(-1)),
            k = lapack_int("ormqr", tau.size(-1)), lda = lapack_int("ormqr", self.size(-2));
  const char side = left ? 'L' : 'R', trans = transpose ? 'T' : 'N';
  if (m == 0 || n == 0 || k == 0) return input3.clone();  // Q is the identity, or C empty
  int lwork = -1, info = 0;
  double query = 0;
  lapack::dormqr_(&side, &trans, &m, &n, &k, a.data_ptr<double>(), &lda, tau.data_ptr<double>(),
                  c.data_ptr<double>(), &m, &query, &lwork, &info, lapack::kOne, lapack::kOne);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<double> work(lwork);
  for (int64_t b = 0; b < count; ++b) {
    lapack::dormqr_(&side, &trans, &m, &n, &k, a.data_ptr<double>() + b * lda * self.size(-1), &lda,
                    tau.data_ptr<double>() + b * k, c.data_ptr<double>() + b * m * n, &m,
                    work.data(), &lwork, &info, lapack::kOne, lapack::kOne);
    BRASA_CHECK(info == 0, "ormqr: LAPACK dormqr failed with info ", info);
  }
  return from_column_major(c, input3);
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& self, bool some, bool compute_uv) {
  check_matrix("linalg.svd", self, false);
  autograd::Recorder r(kSvdBackward, self);
  const int64_t m = self.size(-2), n = self.size(-1), k = std::min(m, n);
  const int64_t ucols = some ? k : m, vrows = some ? k : n;
  Tensor cm = column_major(self);
  const int64_t count = batch_count(cm);
  auto with_batch = [&](std::vector<int64_t> tail) {
    std::vector<int64_t> s = batch_shape(self);
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  const TensorOptions buffer = TensorOptions().dtype(cm.scalar_type());
  Tensor s = empty({count, k}, buffer);
  // U is m x ucols and V^T is vrows x n, column-major: stored as [ucols, m] and [n, vrows].
  Tensor u = zeros({count, ucols, m}, buffer), vt = zeros({count, n, vrows}, buffer);
  const char jobz = compute_uv ? (some ? 'S' : 'A') : 'N';
  const int im = lapack_int("linalg.svd", m), in = lapack_int("linalg.svd", n),
            ldvt = std::max(1, static_cast<int>(vrows)), ldu = std::max(1, im);
  if (k > 0)
    dispatch_real(cm.scalar_type(), [&](auto zero) {
      using T = decltype(zero);
      std::vector<int> iwork(8 * k);
      int lwork = -1, info = 0;
      T query = 0;
      lapack::gesdd(&jobz, &im, &in, cm.data_ptr<T>(), &im, s.data_ptr<T>(), u.data_ptr<T>(), &ldu,
                    vt.data_ptr<T>(), &ldvt, &query, &lwork, iwork.data(), &info, lapack::kOne);
      lwork = std::max(1, static_cast<int>(query));
      std::vector<T> work(lwork);
      for (int64_t b = 0; b < count; ++b) {
        lapack::gesdd(&jobz, &im, &in, cm.data_ptr<T>() + b * m * n, &im, s.data_ptr<T>() + b * k,
                      u.data_ptr<T>() + b * m * ucols, &ldu, vt.data_ptr<T>() + b * vrows * n,
                      &ldvt, work.data(), &lwork, iwork.data(), &info, lapack::kOne);
        BRASA_CHECK(info == 0, "linalg.svd", batch_name(b, count),
                    ": The algorithm failed to converge because the input matrix is "
                    "ill-conditioned or has too many repeated singular values (error code: ",
                    info, ").");
      }
    });
  Tensor S = s.reshape(with_batch({k})).to(self.scalar_type()).to(self.device());
  Tensor U = from_column_major(u.reshape(with_batch({ucols, m})), self);
  Tensor V = mT(from_column_major(vt.reshape(with_batch({n, vrows})), self)).contiguous();
  if (!compute_uv) {
    U = zeros(with_batch({m, m}), self.options());
    V = zeros(with_batch({n, n}), self.options());
  }
  if (r)
    r.save(U, S, V).finish({U, S, V}, [m, n, k, some, compute_uv](
                                          autograd::FormulaNode& node,
                                          const autograd::variable_list& g) {
      BRASA_CHECK(compute_uv, "svd_backward: Setting compute_uv to false in torch.svd doesn't ",
                  "compute singular matrices, and hence we cannot compute backward.");
      BRASA_CHECK(some || m == n, "svd_backward: the derivative of a complete SVD (some=false) ",
                  "of a non-square matrix is not well-defined; use some=true");
      Tensor U = node.saved(0), S = node.saved(1), V = node.saved(2);
      Tensor gU = g[0], gS = g[1], gV = g[2];
      Tensor s2 = S * S;
      // F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it.
      Tensor diff = s2.unsqueeze(-2) - s2.unsqueeze(-1);
      Tensor off = 1 - eye(k, S.options());
      Tensor F = off / (diff + (1 - off));
      Tensor J = F * matmul(mT(U), gU), K = F * matmul(mT(V), gV);
      Tensor inner = diag_embed(gS) + (J + mT(J)) * S.unsqueeze(-2) + S.unsqueeze(-1) * (K + mT(K));
      Tensor gA = matmul(matmul(U, inner), mT(V));
      Tensor s_inv = S.reciprocal();
      if (m > k) gA = gA + matmul((gU - matmul(U, matmul(mT(U), gU))) * s_inv.unsqueeze(-2), mT(V));
      if (n > k) gA = gA + matmul(U * s_inv.unsqueeze(-2), mT(gV - matmul(V, matmul(mT(V), gV))));
      return autograd::variable_list{gA};
    });
  return {U, S, V};
}

std::tuple<Tensor, Tensor> symeig(const Tensor& self, bool eigenvectors, bool upper) {
  check_matrix("symeig", self, true);
  autograd::Recorder r(kSymeigBackward, self);
  Tensor cm = column_major(self);
  const int64_t count = batch_count(cm);
  const int n = lapack_int("symeig", self.size(-1));
  Tensor w = empty({count, n}, TensorOptions().dtype(cm.scalar_type()));
  const char jobz = eigenvectors || r ? 'V' : 'N', uplo = upper ? 'U' : 'L';
  if (n > 0)
    dispatch_real(cm.scalar_type(), [&](auto zero) {
      using T = decltype(zero);
      int lwork = -1, liwork = -1, info = 0, iquery = 0;
      T query = 0;
      lapack::syevd(&jobz, &uplo, &n, cm.data_ptr<T>(), &n, w.data_ptr<T>(), &query, &lwork,
                    &iquery, &liwork, &info, lapack::kOne, lapack::kOne);
      lwork = std::max(1, static_cast<int>(query));
      liwork = std::max(1, iquery);
      std::vector<T> work(lwork);
      std::vector<int> iwork(liwork);
      for (int64_t b = 0; b < count; ++b) {
        lapack::syevd(&jobz, &uplo, &n, cm.data_ptr<T>() + b * n * n, &n, w.data_ptr<T>() + b * n,
                      work.data(), &lwork, iwork.data(), &liwork, &info, lapack::kOne,
                      lapack::kOne);
        BRASA_CHECK(info == 0, "symeig", batch_name(b, count),
                    ": the algorithm failed to converge; ", info,
                    " off-diagonal elements of an intermediate tridiagonal form did not converge "
                    "to zero.");
      }
    });
  std::vector<int64_t> wshape = batch_shape(self);
  wshape.push_back(n);
  Tensor e = w.reshape(wshape).to(self.scalar_type()).to(self.device());
  Tensor V = jobz == 'V' ? from_column_major(cm, self) : zeros({0}, self.options());
  if (r)
    r.save(e, V).finish(
        {e, V}, [eigenvectors](autograd::FormulaNode& node, const autograd::variable_list& g) {
          Tensor e = node.saved(0), V = node.saved(1);
          const int64_t n = e.size(-1);
          Tensor inner = diag_embed(g[0]);
          // Without eigenvectors asked for, V still carries a gradient in a
          // double backward (the first backward's result depends on it).
          const bool vector_grad =
              eigenvectors || (g[1].defined() && g[1].numel() > 0 && g[1].ne(0).any().item<bool>());
          if (vector_grad) {
            // F_ij = 1 / (e_j - e_i) off the diagonal.
            Tensor off = 1 - eye(n, e.options());
            Tensor F = off / (e.unsqueeze(-2) - e.unsqueeze(-1) + (1 - off));
            inner = inner + F * matmul(mT(V), g[1]);
          }
          Tensor gA = matmul(matmul(V, inner), mT(V));
          return autograd::variable_list{(gA + mT(gA)) * 0.5};
        });
  return {e, eigenvectors ? V : zeros({0}, self.options())};
}

namespace detail {
Tensor pinv(const Tensor& self, double rcond, bool hermitian) {
  check_matrix(hermitian ? "linalg.pinv" : "pinverse", self, hermitian);
  autograd::Recorder r(kPinvBackward, self);
  Tensor P;
  {
    NoGradGuard no_grad;
    Tensor A = self.detach();
    if (hermitian) {
      // A = V diag(w) V^T: invert the eigenvalues that are not negligible.
      auto [w, V] = symeig(A, true, false);
      Tensor cutoff = std::get<0>(w.abs().max(-1, true)) * rcond;
      Tensor w_inv = where(w.abs() > cutoff, w.reciprocal(), zeros_like(w));
      P = matmul(V * w_inv.unsqueeze(-2), mT(V));
    } else {
      auto [U, S, V] = svd(A);
      if (S.numel() == 0) {
        auto shape = batch_shape(A);
        shape.insert(shape.end(), {A.size(-1), A.size(-2)});
        P = zeros(shape, A.options());
      } else {
        Tensor cutoff = std::get<0>(S.max(-1, true)) * rcond;
        Tensor s_inv = where(S > cutoff, S.reciprocal(), zeros_like(S));
        P = matmul(V * s_inv.unsqueeze(-2), mT(U));
      }
    }
  }
  if (r)
    r.save(self, P).finish(P, [](autograd::FormulaNode& node, const autograd::variable_list& g) {
      // The derivative of the pseudo-inverse where the rank stays put
      // (Golub and Pereyra), with no division by the singular values, so
      // rank-deficient inputs get finite gradients:
      // gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A).
      Tensor A = node.saved(0), P = node.saved(1), G = g[0];
      Tensor Pt = mT(P), Gt = mT(G);
      Tensor left_residual = -matmul(A, P), right_residual = -matmul(P, A);
      left_residual.diagonal(0, -2, -1).add_(1);
      right_residual.diagonal(0, -2, -1).add_(1);
      Tensor gA = -matmul(matmul(Pt, G), Pt) + matmul(matmul(left_residual, Gt), matmul(P, Pt)) +
                  matmul(matmul(Pt, P), matmul(Gt, right_residual));
      return autograd::variable_list{gA};
    });
  return P;
}
}  // namespace detail

Tensor pinverse(const Tensor& self, double rcond) { return detail::pinv(self, rcond, false); }

Tensor matrix_power(const Tensor& self, int64_t n) {
  check_matrix("linalg.matrix_power", self, true);
  if (n == 0) return eye(self.size(-1), self.options()).expand(self.sizes()).clone();
  Tensor base = n < 0 ? inverse(self) : self;
  // Repeated squaring.
  Tensor result;
  for (uint64_t e = static_cast<uint64_t>(n < 0 ? -n : n); e > 0; e >>= 1) {
    if (e & 1) result = result.defined() ? matmul(result, base) : base;
    if (e > 1) base = matmul(base, base);
  }
  return result;
}

Tensor matrix_exp(const Tensor& self) {
  check_matrix("linalg.matrix_exp", self, true);
  // Scaling and squaring: exp(A) = exp(A / 2^s)^(2^s) with ||A / 2^s||_1 <= 1/2,
  // then a Taylor series of 18 terms (its remainder is below double's precision there).
  const double norm1 =
      self.numel() == 0 ? 0.0 : self.detach().abs().sum(-2).max().to(kDouble).item<double>();
  const int s = norm1 > 0.5 ? static_cast<int>(std::ceil(std::log2(norm1 / 0.5))) : 0;
  Tensor A = self / std::ldexp(1.0, s);
  Tensor identity = eye(self.size(-1), self.options()).expand(self.sizes());
  Tensor term = identity, sum = identity;
  for (int i = 1; i <= 18; ++i) {
    term = matmul(term, A) / static_cast<double>(i);
    sum = sum + term;
  }
  for (int i = 0; i < s; ++i) sum = matmul(sum, sum);
  return sum;
}

Tensor nuclear_norm(const Tensor& self, bool keepdim) {
  check_matrix("nuclear_norm", self, false);
  BRASA_CHECK(self.dim() == 2, "nuclear_norm: Expected a 2-D tensor, got shape ", self.sizes(),
              " (give the two dims for batches)");
  Tensor n = std::get<1>(svd(self)).sum();
  return keepdim ? n.reshape({1, 1}) : n;
}
Tensor nuclear_norm(const Tensor& self, IntArrayRef dim, bool keepdim) {
  check_matrix("nuclear_norm", self, false);
  BRASA_CHECK(dim.size() == 2, "nuclear_norm: dim must be a 2-tuple, got ", dim.size(), " dims");
  int64_t d0 = maybe_wrap_dim(dim[0], self.dim(), "nuclear_norm"),
          d1 = maybe_wrap_dim(dim[1], self.dim(), "nuclear_norm");
  BRASA_CHECK(d0 != d1, "nuclear_norm: the two dims must differ, got ", d0, " twice");
  // [..., d0, d1]
  Tensor moved = movedim(movedim(self, d0, -1), d1 < d0 ? d1 : d1 - 1, -1);
  Tensor n = std::get<1>(svd(moved)).sum(-1);
  if (!keepdim) return n;
  for (int64_t d : {std::min(d0, d1), std::max(d0, d1)}) n = n.unsqueeze(d);
  return n;
}

}  // namespace brasa
