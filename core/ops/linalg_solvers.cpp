// torch::linalg's LAPACK-backed additions: the general solver (getrf +
// getrs), the general eigendecomposition (geev) with its gradient, the LDL
// factorization (sytrf / sytrs) and the differentiable LU.
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/cpu/lapack.h>
#include <brasa/ops/decompositions.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/lapack_buffers.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/linalg_functions.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/type_queries.h>

#include <algorithm>
#include <vector>

namespace brasa::linalg {

using namespace lapack_buffers;

namespace {

const autograd::BackwardName kSolveBackward("LinalgSolveExBackward0");
const autograd::BackwardName kLuBackward("LinalgLuBackward0");
const autograd::BackwardName kEigBackward("LinalgEigBackward0");

// A and B [..., n, k] with their batch dims broadcast to a common shape.
std::pair<Tensor, Tensor> broadcast_batches(const char* op, const Tensor& A, const Tensor& B) {
  auto common = brasa::detail::broadcast_shapes(op, batch_shape(A), batch_shape(B));
  std::vector<int64_t> a_shape(common.begin(), common.end()), b_shape = a_shape;
  a_shape.insert(a_shape.end(), {A.size(-2), A.size(-1)});
  b_shape.insert(b_shape.end(), {B.size(-2), B.size(-1)});
  return {A.expand(a_shape), B.expand(b_shape)};
}

// X with A X = B (batch dims already alike), and LAPACK's info per matrix;
// recorded for autograd: gB = A^-T gX, gA = -gB X^T.
std::pair<Tensor, std::vector<int>> solve_matrices(const Tensor& A, const Tensor& B) {
  autograd::Recorder r(kSolveBackward, A, B);
  const ScalarType type = working_type(A, B);
  Tensor acm = column_major(A, type), bcm = column_major(B, type), piv;
  std::vector<int> infos = lu_in_place("linalg.solve", acm, piv);
  const int64_t count = batch_count(acm);
  const int n = lapack_int("linalg.solve", A.size(-1)), k = lapack_int("linalg.solve", B.size(-1));
  const char trans = 'N';
  dispatch_real(type, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t b = 0; b < count && n > 0 && k > 0; ++b) {
      int info = 0;
      lapack::getrs(&trans, &n, &k, acm.data_ptr<T>() + b * n * n, &n,
                    piv.data_ptr<int32_t>() + b * n, bcm.data_ptr<T>() + b * n * k, &n, &info,
                    lapack::kOne);
    }
  });
  Tensor X = from_column_major(bcm, B);
  if (r)
    r.save(A, X).finish(X, [](autograd::FormulaNode& node, const autograd::variable_list& g) {
      Tensor A = node.saved(0), X = node.saved(1);
      Tensor gB = solve_matrices(mT(A), g[0]).first;
      return autograd::variable_list{-matmul(gB, mT(X)), gB};
    });
  return {X, infos};
}

void check_same_dtype(const char* op, const Tensor& A, const Tensor& B) {
  BRASA_CHECK(B.defined(), op, ": expected a defined B");
  BRASA_CHECK(A.scalar_type() == B.scalar_type(), op,
              ": Expected A and B to have the same dtype, but found A of type ", A.scalar_type(),
              " and B of type ", B.scalar_type(), " instead");
  BRASA_CHECK(A.device() == B.device(), op, ": Expected A and B on the same device, got ",
              A.device(), " and ", B.device());
}

// PyTorch's rule: B is a (batch of) vector(s) when it is 1-D or has A's shape minus its last dim.
bool is_vector_rhs(const Tensor& A, const Tensor& B) {
  if (B.dim() == 1) return true;
  return B.dim() == A.dim() - 1 && B.sizes().equals(A.sizes().slice(0, A.dim() - 1));
}

}  // namespace

std::tuple<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left,
                                    bool check_errors) {
  check_matrix("linalg.solve", A, true);
  check_same_dtype("linalg.solve", A, B);
  const bool vector = is_vector_rhs(A, B);
  Tensor Bm = vector ? B.unsqueeze(left ? -1 : -2) : B;
  BRASA_CHECK(Bm.dim() >= 2, "linalg.solve: B must have at least 1 dimension, got shape ",
              B.sizes());
  // X A = B is A^T X^T = B^T.
  Tensor Al = left ? A : mT(A), Bl = left ? Bm : mT(Bm);
  BRASA_CHECK(Bl.size(-2) == Al.size(-1), "linalg.solve: Incompatible shapes of A and B for the ",
              "equation ", left ? "AX = B" : "XA = B", " (", A.size(-2), "x", A.size(-1), " and ",
              Bm.size(-2), "x", Bm.size(-1), ")");
  auto [Ae, Be] = broadcast_batches("linalg.solve", Al, Bl);
  auto [X, infos] = solve_matrices(Ae, Be);
  const int64_t count = static_cast<int64_t>(infos.size());
  if (check_errors)
    for (int64_t b = 0; b < count; ++b)
      BRASA_CHECK(infos[b] == 0, "torch.linalg.solve: ",
                  count > 1 ? "(Batch element " + std::to_string(b) + "): " : "",
                  "The solver failed because the input matrix is singular.");
  if (!left) X = mT(X);
  if (vector) X = X.squeeze(left ? -1 : -2);
  Tensor info =
      tensor(std::vector<int32_t>(infos.begin(), infos.end()), TensorOptions().dtype(kInt))
          .reshape(batch_shape(Ae))
          .to(A.device());
  return {X, info};
}

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  return std::get<0>(solve_ex(A, B, left, true));
}

namespace {

Tensor conj_transpose(const Tensor& M) { return conj(M.transpose(-2, -1)); }

// X with M X = B for complex M [..., n, n] and B [..., n, k], as the real
// system [[Re M, -Im M], [Im M, Re M]] [Re X; Im X] = [Re B; Im B].
Tensor complex_solve(const Tensor& M, const Tensor& B) {
  const int64_t n = M.size(-1);
  Tensor Mr = real(M), Mi = imag(M);
  Tensor block = cat({cat({Mr, -Mi}, -1), cat({Mi, Mr}, -1)}, -2);
  Tensor X = solve(block, cat({real(B), imag(B)}, -2));
  return complex(X.narrow(-2, 0, n), X.narrow(-2, n, n));
}

// The gradient of A = V diag(L) V^-1 (unit-norm eigenvectors) as PyTorch
// derives it: with W = V^H gV,
//   gA = V^-H (diag(gL) + (W - V^H V diag(Re diag W)) / conj(L_j - L_i)) V^H,
// the part off the diagonal divided elementwise; its real part, A being real.
// Eigenvectors are unique only up to a phase e^{i phi}, so a loss that
// depends on the phase (Im diag W != 0) has no gradient.
Tensor eig_backward(const Tensor& L, const Tensor& V, const Tensor& gL, const Tensor& gV) {
  const int64_t n = V.size(-1);
  Tensor identity = eye(n, TensorOptions().dtype(toRealValueType(V.scalar_type())));
  identity = identity.to(V.device());
  Tensor Vh = conj_transpose(V);
  Tensor inner = zeros_like(V);
  if (gV.defined()) {
    Tensor W = matmul(Vh, gV);
    Tensor diag_W = W.diagonal(0, -2, -1);
    Tensor phase = imag(diag_W);
    BRASA_CHECK(allclose(phase, zeros_like(phase), 1e-2, 1e-3),
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to ",
                "multiplication by e^{i phi}. The specified loss function depends on this ",
                "quantity, so it is ill-defined.");
    Tensor projected = W - matmul(Vh, V * real(diag_W).unsqueeze(-2));
    Tensor Lc = conj(L);
    Tensor gaps = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + identity;  // 1 on the diagonal
    inner = projected / gaps * (1 - identity);
  }
  if (gL.defined()) inner = inner + gL.unsqueeze(-1) * identity;
  Tensor gA = complex_solve(Vh, matmul(inner, Vh));
  return real(gA).contiguous();
}

}  // namespace

std::tuple<Tensor, Tensor> eig(const Tensor& A) {
  check_matrix("linalg.eig", A, true);
  autograd::Recorder r(kEigBackward, A);
  Tensor cm = column_major(A, kDouble);
  const int64_t count = batch_count(cm);
  const int n = lapack_int("linalg.eig", A.size(-1));
  // Real and imaginary parts of the values [count, n] and vectors [count, n, n] (row-major).
  Tensor wr = empty({count, n}, TensorOptions().dtype(kDouble)), wi = empty_like(wr);
  Tensor vr = empty({count, n, n}, TensorOptions().dtype(kDouble));
  Tensor vre = zeros({count, n, n}, TensorOptions().dtype(kDouble)), vim = zeros_like(vre);
  if (n > 0) {
    const char jobvl = 'N', jobvr = 'V';
    const int one = 1;
    double dummy = 0, query = 0;
    int lwork = -1, info = 0;
    lapack::dgeev_(&jobvl, &jobvr, &n, cm.data_ptr<double>(), &n, wr.data_ptr<double>(),
                   wi.data_ptr<double>(), &dummy, &one, vr.data_ptr<double>(), &n, &query, &lwork,
                   &info, lapack::kOne, lapack::kOne);
    lwork = std::max(1, static_cast<int>(query));
    std::vector<double> work(lwork);
    for (int64_t b = 0; b < count; ++b) {
      lapack::dgeev_(&jobvl, &jobvr, &n, cm.data_ptr<double>() + b * n * n, &n,
                     wr.data_ptr<double>() + b * n, wi.data_ptr<double>() + b * n, &dummy, &one,
                     vr.data_ptr<double>() + b * n * n, &n, work.data(), &lwork, &info,
                     lapack::kOne, lapack::kOne);
      BRASA_CHECK(info == 0, "linalg.eig", batch_name(b, count),
                  ": The algorithm failed to converge because the input matrix is ill-conditioned ",
                  "or has too many repeated eigenvalues (error code: ", info, ").");
      // geev stores a complex pair's vectors as two real columns: re, im.
      const double* v = vr.data_ptr<double>() + b * n * n;  // column-major
      const double* im = wi.data_ptr<double>() + b * n;
      double* re_out = vre.data_ptr<double>() + b * n * n;
      double* im_out = vim.data_ptr<double>() + b * n * n;
      for (int j = 0; j < n; ++j) {
        const bool pair = im[j] != 0 && j + 1 < n;
        for (int i = 0; i < n; ++i) {
          re_out[i * n + j] = v[j * n + i];
          if (pair) {
            re_out[i * n + j + 1] = v[j * n + i];
            im_out[i * n + j] = v[(j + 1) * n + i];
            im_out[i * n + j + 1] = -v[(j + 1) * n + i];
          }
        }
        if (pair) ++j;
      }
    }
  }
  const ScalarType complex_type = A.scalar_type() == kDouble ? kComplexDouble : kComplexFloat;
  std::vector<int64_t> wshape = batch_shape(A), vshape = wshape;
  wshape.push_back(n);
  vshape.insert(vshape.end(), {n, n});
  Tensor values = view_as_complex(stack({wr, wi}, -1)).reshape(wshape);
  Tensor vectors = view_as_complex(stack({vre, vim}, -1)).reshape(vshape);
  values = values.to(complex_type).to(A.device());
  vectors = vectors.to(complex_type).to(A.device());
  if (r)
    r.save(values, vectors)
        .finish({values, vectors}, [](autograd::FormulaNode& node,
                                      const autograd::variable_list& g) {
          return autograd::variable_list{eig_backward(node.saved(0), node.saved(1), g[0], g[1])};
        });
  return {values, vectors};
}

Tensor eigvals(const Tensor& A) { return std::get<0>(eig(A)); }

std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex(const Tensor& A, bool hermitian,
                                                 bool check_errors) {
  (void)hermitian;  // real matrices: symmetric and Hermitian are one
  check_matrix("torch.linalg.ldl_factor_ex", A, true);
  BRASA_CHECK(!A.requires_grad() || !autograd::GradMode::is_enabled(),
              "torch.linalg.ldl_factor_ex: the derivative is not implemented");
  Tensor cm = column_major(A, kDouble);
  const int64_t count = batch_count(cm);
  const int n = lapack_int("torch.linalg.ldl_factor_ex", A.size(-1));
  Tensor piv = zeros({count, n}, TensorOptions().dtype(kInt));
  std::vector<int32_t> infos(count, 0);
  const char uplo = 'L';
  if (n > 0) {
    int lwork = -1, info = 0;
    double query = 0;
    lapack::dsytrf_(&uplo, &n, cm.data_ptr<double>(), &n, piv.data_ptr<int32_t>(), &query, &lwork,
                    &info, lapack::kOne);
    lwork = std::max(1, static_cast<int>(query));
    std::vector<double> work(lwork);
    for (int64_t b = 0; b < count; ++b) {
      lapack::dsytrf_(&uplo, &n, cm.data_ptr<double>() + b * n * n, &n,
                      piv.data_ptr<int32_t>() + b * n, work.data(), &lwork, &info, lapack::kOne);
      infos[b] = info;
      BRASA_CHECK(!check_errors || info == 0, "torch.linalg.ldl_factor_ex", batch_name(b, count),
                  ": The factorization could not be completed because ",
                  "the input is singular (D[", info, ", ", info, "] is zero).");
    }
  }
  std::vector<int64_t> bshape = batch_shape(A), pshape = bshape;
  pshape.push_back(n);
  // sytrf leaves the upper triangle untouched: PyTorch returns it zeroed.
  Tensor LD = tril(from_column_major(cm, A));
  return {LD, piv.reshape(pshape).to(A.device()),
          tensor(infos, TensorOptions().dtype(kInt)).reshape(bshape).to(A.device())};
}

std::tuple<Tensor, Tensor> ldl_factor(const Tensor& A, bool hermitian) {
  auto [LD, pivots, info] = ldl_factor_ex(A, hermitian, true);
  return {LD, pivots};
}

Tensor ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  (void)hermitian;
  check_matrix("torch.linalg.ldl_solve", LD, true);
  check_same_dtype("torch.linalg.ldl_solve", LD, B);
  BRASA_CHECK(B.dim() >= 2 && B.size(-2) == LD.size(-1), "torch.linalg.ldl_solve: Incompatible ",
              "shapes of LD and B (", LD.sizes(), " and ", B.sizes(), ")");
  BRASA_CHECK(pivots.defined() && pivots.scalar_type() == kInt &&
                  pivots.sizes().equals(LD.sizes().slice(0, LD.dim() - 1)),
              "torch.linalg.ldl_solve: expected int32 pivots of shape ",
              LD.sizes().slice(0, LD.dim() - 1), ", got ",
              pivots.defined() ? pivots.sizes() : IntArrayRef{});
  BRASA_CHECK(!B.requires_grad() || !autograd::GradMode::is_enabled(),
              "torch.linalg.ldl_solve: the derivative is not implemented");
  auto [LDe, Be] = broadcast_batches("torch.linalg.ldl_solve", LD, B);
  auto pshape = batch_shape(LDe);
  pshape.push_back(LD.size(-1));
  Tensor piv = pivots.expand(pshape).to(kCPU).contiguous();
  // sytrs trusts the pivots: entries are row numbers 1..n, negative for the
  // two rows of a 2x2 block (both entries alike). Anything else would make
  // LAPACK read and write out of bounds.
  {
    const int32_t* p = piv.data_ptr<int32_t>();
    const int64_t n = LD.size(-1);
    for (int64_t i = 0; i < piv.numel(); ++i)
      BRASA_CHECK(p[i] != 0 && p[i] >= -n && p[i] <= n, "torch.linalg.ldl_solve: pivots must ",
                  "be in [-", n, ", -1] or [1, ", n, "] as ldl_factor gives them, got ", p[i]);
  }
  Tensor acm = column_major(LDe, kDouble), bcm = column_major(Be, kDouble);
  const int64_t count = batch_count(acm);
  const int n = lapack_int("torch.linalg.ldl_solve", LD.size(-1)),
            k = lapack_int("torch.linalg.ldl_solve", B.size(-1));
  const char uplo = 'L';
  for (int64_t b = 0; b < count && n > 0 && k > 0; ++b) {
    int info = 0;
    lapack::dsytrs_(&uplo, &n, &k, acm.data_ptr<double>() + b * n * n, &n,
                    piv.data_ptr<int32_t>() + b * n, bcm.data_ptr<double>() + b * n * k, &n, &info,
                    lapack::kOne);
    BRASA_CHECK(info == 0, "torch.linalg.ldl_solve: LAPACK dsytrs rejected argument ", -info);
  }
  return from_column_major(bcm, B);
}

std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot) {
  return linalg_lu_factor(A, pivot);
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot) {
  check_matrix("linalg.lu", A, false);
  autograd::Recorder r(kLuBackward, A);
  Tensor P, L, U;
  {
    NoGradGuard no_grad;
    auto [LU, piv] = linalg_lu_factor(A.detach(), pivot);
    std::tie(P, L, U) = lu_unpack(LU, piv);
  }
  const bool square = A.size(-1) == A.size(-2);
  if (r)
    r.save(P, L, U).finish(
        {P, L, U}, [square](autograd::FormulaNode& node, const autograd::variable_list& g) {
          BRASA_CHECK(square, "linalg.lu: the derivative is implemented for square matrices only");
          // A = P L U: dA = P (dL U + L dU), so with M = tril(L^T gL, -1) + triu(gU U^T),
          // gA = P L^-T M U^-T.
          Tensor P = node.saved(0), L = node.saved(1), U = node.saved(2);
          Tensor M = tril(matmul(mT(L), g[1]), -1) + triu(matmul(g[2], mT(U)));
          Tensor left = solve_triangular(mT(L), M, /*upper=*/true, /*left=*/true, true);
          Tensor gA = solve_triangular(mT(U), left, /*upper=*/false, /*left=*/false);
          return autograd::variable_list{matmul(P, gA)};
        });
  return {P, L, U};
}

namespace detail {

std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq_by_driver(const Tensor& A, const Tensor& B,
                                                           double rcond, std::string_view driver) {
  const char* op = "torch.linalg.lstsq";
  const ScalarType type = working_type(A, B);
  const int64_t count = batch_count(A);
  const int m = lapack_int(op, A.size(-2)), n = lapack_int(op, A.size(-1)),
            k = lapack_int(op, B.size(-1)), ldb = std::max({1, m, n});
  Tensor acm = column_major(A, type);
  // B's columns, each ldb long: the drivers write X into their first n rows.
  Tensor bcm = zeros({count, k, ldb}, TensorOptions().dtype(type));
  if (m > 0) bcm.narrow(-1, 0, m).copy_(column_major(B, type).reshape({count, k, m}));
  const bool with_values = driver == "gelsd" || driver == "gelss";
  const int min_mn = std::min(m, n);
  Tensor sv = empty({count, min_mn}, TensorOptions().dtype(type));
  std::vector<int64_t> ranks(count, min_mn);
  const int lda = std::max(1, m);
  dispatch_real(type, [&](auto zero) {
    using T = decltype(zero);
    const T cond = static_cast<T>(rcond);
    T* a = acm.data_ptr<T>();
    T* b = bcm.data_ptr<T>();
    T* s = sv.data_ptr<T>();
    std::vector<int> jpvt(std::max(1, n)), iwork(1);
    int info = 0, rank = 0, lwork = -1;
    T query = 0;
    const char trans = 'N';
    // Workspace queries, then one call per matrix.
    auto run = [&](int64_t i, T* work, int* iw) {
      T* ai = a + i * m * n;
      T* bi = b + i * k * ldb;
      if (driver == "gels") {
        lapack::gels(&trans, &m, &n, &k, ai, &lda, bi, &ldb, work, &lwork, &info, lapack::kOne);
      } else if (driver == "gelsy") {
        std::fill(jpvt.begin(), jpvt.end(), 0);
        lapack::gelsy(&m, &n, &k, ai, &lda, bi, &ldb, jpvt.data(), &cond, &rank, work, &lwork,
                      &info);
      } else if (driver == "gelsd") {
        lapack::gelsd(&m, &n, &k, ai, &lda, bi, &ldb, s + i * min_mn, &cond, &rank, work, &lwork,
                      iw, &info);
      } else {
        lapack::gelss(&m, &n, &k, ai, &lda, bi, &ldb, s + i * min_mn, &cond, &rank, work, &lwork,
                      &info);
      }
    };
    if (count == 0 || min_mn == 0) return;
    run(0, &query, iwork.data());
    lwork = std::max(1, static_cast<int>(query));
    if (driver == "gelsd") iwork.resize(std::max(1, iwork[0]));
    std::vector<T> work(lwork);
    for (int64_t i = 0; i < count; ++i) {
      run(i, work.data(), iwork.data());
      BRASA_CHECK(info == 0, op, batch_name(i, count), ": LAPACK ", driver, " failed with info ",
                  info,
                  info > 0 ? " (the algorithm did not converge, or A is rank-deficient "
                             "for gels)"
                           : "");
      if (driver != "gels") ranks[i] = rank;
    }
  });
  std::vector<int64_t> bshape = batch_shape(A), xshape = bshape, vshape = bshape;
  xshape.insert(xshape.end(), {k, n});
  Tensor X = from_column_major(bcm.narrow(-1, 0, n).reshape(xshape), B);
  const bool full_rank = std::all_of(ranks.begin(), ranks.end(), [&](int64_t r) { return r == n; });
  Tensor residuals = empty({0}, B.options());
  if (m > n && driver != "gelsy" && full_rank) {
    std::vector<int64_t> rshape = bshape;
    rshape.push_back(k);
    residuals = bcm.narrow(-1, n, m - n)
                    .pow(2)
                    .sum({-1})
                    .reshape(rshape)
                    .to(B.scalar_type())
                    .to(B.device());
  }
  Tensor rank = driver == "gels"
                    ? empty({0}, TensorOptions().dtype(kLong))
                    : tensor(ranks, TensorOptions().dtype(kLong)).reshape(bshape).to(A.device());
  vshape.push_back(min_mn);
  Tensor values =
      with_values ? sv.reshape(vshape).to(A.scalar_type()).to(A.device()) : empty({0}, A.options());
  return {X, residuals, rank, values};
}

}  // namespace detail

}  // namespace brasa::linalg
