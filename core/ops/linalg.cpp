#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/type_queries.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/linalg.h>

#include <cstring>
#include <map>

namespace brasa {
namespace {

// c = alpha * a @ b + beta * c on the tensors' device (c contiguous [M, N]).
void gemm(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha,
          const Scalar& beta) {
  if (a.size(0) == 0 || b.size(1) == 0) return;
  kernel<GemmKernel>(c.device())(a, b, c, alpha, beta);
}

void check_mm(const char* op, const Tensor& a, const Tensor& b) {
  BRASA_CHECK(a.dim() == 2, op, ": self must be a matrix, got a ", a.dim(), "-D tensor of shape ",
              a.sizes());
  BRASA_CHECK(b.dim() == 2, op, ": mat2 must be a matrix, got a ", b.dim(), "-D tensor of shape ",
              b.sizes());
  BRASA_CHECK(a.size(1) == b.size(0), op, ": shapes ", a.sizes(), " and ", b.sizes(),
              " cannot be multiplied (", a.size(1), " != ", b.size(0), ")");
  BRASA_CHECK(a.dtype() == b.dtype(), op,
              ": expected mat1 and mat2 to have the same dtype, but got: ", a.dtype(),
              " != ", b.dtype());
  BRASA_CHECK(a.device() == b.device(), op, ": expected mat1 and mat2 on the same device, got ",
              a.device(), " and ", b.device());
}

using autograd::BackwardName;
using autograd::FormulaNode;
using autograd::variable_list;
const BackwardName kMmBackward("MmBackward0"), kBmmBackward("BmmBackward0"),
    kAddmmBackward("AddmmBackward0");

bool is_transposed_contiguous(const Tensor& m) {
  return m.dim() == 2 && m.stride(0) == 1 && m.stride(1) == m.size(0);
}

// Gradients of a = m1 @ m2, each laid out like the input it belongs to: for
// a transposed input (w.t() in a linear layer) the product is computed
// transposed, so the gradient reaching w is contiguous again.
Tensor mm_mat1_grad(const Tensor& g, const Tensor& m1, const Tensor& m2) {
  if (is_transposed_contiguous(m1) && !m1.is_contiguous()) return mm(m2, g.t()).t();
  return mm(g, m2.t());
}
Tensor mm_mat2_grad(const Tensor& g, const Tensor& m1, const Tensor& m2) {
  if (is_transposed_contiguous(m2) && !m2.is_contiguous()) return mm(g.t(), m1).t();
  return mm(m1.t(), g);
}

// When the gradient of node input i (m1 when wrt_m1, else m2, of a = m1 @ m2,
// with g = da) would only be added into a leaf's existing .grad (a weight
// after zero_grad without set_to_none, or over accumulation steps), adds it
// there with one GEMM (beta = 1) and returns true; the caller then passes on
// no gradient. Saves the product's zero fill, a buffer, and the add's pass.
bool add_mm_grad_into_leaf(FormulaNode& n, size_t i, bool wrt_m1, const Tensor& g, const Tensor& m1,
                           const Tensor& m2) {
  if (g.dtype() != kFloat && g.dtype() != kDouble) return false;
  autograd::FusableGrad target = autograd::fusable_leaf_grad(n, i, g.dtype());
  Tensor* acc = target.grad;
  if (!acc || acc->is_alias_of(g) || acc->is_alias_of(m1) || acc->is_alias_of(m2)) return false;
  const bool transposed = target.transposed;
  if (wrt_m1)  // dm1 = g m2^T, its transpose m2 g^T
    transposed ? gemm(m2, g.t(), *acc, 1, 1) : gemm(g, m2.t(), *acc, 1, 1);
  else  // dm2 = m1^T g, its transpose g^T m1
    transposed ? gemm(g.t(), m1, *acc, 1, 1) : gemm(m1.t(), g, *acc, 1, 1);
  acc->bump_version();
  target.sink->accumulated_in_place();
  return true;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (a.is_complex() || b.is_complex()) return detail::complex_matmul(a, b, mm);
  check_mm("mm", a, b);
  autograd::Recorder r(kMmBackward, a, b);
  Tensor c = empty({a.size(0), b.size(1)}, a.options());
  gemm(a, b, c, 1, 0);
  if (r)
    r.save(a, b).finish(c, [](FormulaNode& n, const variable_list& g) {
      variable_list d(2);
      const Tensor m1 = n.saved(0), m2 = n.saved(1);
      if (n.needs(0) && !add_mm_grad_into_leaf(n, 0, true, g[0], m1, m2))
        d[0] = mm_mat1_grad(g[0], m1, m2);
      if (n.needs(1) && !add_mm_grad_into_leaf(n, 1, false, g[0], m1, m2))
        d[1] = mm_mat2_grad(g[0], m1, m2);
      return d;
    });
  return c;
}

Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  check_mm("mm", a, b);
  BRASA_CHECK(out.sizes() == IntArrayRef({a.size(0), b.size(1)}) && out.is_contiguous() &&
                  out.dtype() == a.dtype() && out.device() == a.device(),
              "mm_out: out must be a contiguous ", a.dtype(), " tensor of shape [", a.size(0), ", ",
              b.size(1), "] on ", a.device(), ", got ", out.dtype(), " ", out.sizes(), " on ",
              out.device());
  gemm(a, b, out, 1, 0);
  out.bump_version();
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (a.is_complex() || b.is_complex()) return detail::complex_matmul(a, b, bmm);
  BRASA_CHECK(a.dim() == 3 && b.dim() == 3, "bmm: expected 3-D tensors, got ", a.dim(), "-D and ",
              b.dim(), "-D");
  BRASA_CHECK(a.size(0) == b.size(0), "bmm: batch sizes differ: ", a.sizes(), " and ", b.sizes());
  BRASA_CHECK(a.size(2) == b.size(1), "bmm: shapes ", a.sizes(), " and ", b.sizes(),
              " cannot be multiplied (", a.size(2), " != ", b.size(1), ")");
  BRASA_CHECK(a.dtype() == b.dtype(), "bmm: expected the same dtype, got ", a.dtype(), " and ",
              b.dtype());
  BRASA_CHECK(a.device() == b.device(), "bmm: expected both tensors on the same device, got ",
              a.device(), " and ", b.device());
  int64_t B = a.size(0);
  autograd::Recorder r(kBmmBackward, a, b);
  Tensor c = empty({B, a.size(1), b.size(2)}, a.options());
  kernel<BmmKernel>(c.device())(a, b, c);
  if (r)
    r.save(a, b).finish(c, [](FormulaNode& n, const variable_list& g) {
      variable_list d(2);
      if (n.needs(0)) d[0] = bmm(g[0], n.saved(1).transpose(1, 2));
      if (n.needs(1)) d[1] = bmm(n.saved(0).transpose(1, 2), g[0]);
      return d;
    });
  return c;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  BRASA_CHECK(a.dim() == 1 && b.dim() == 1, "dot: 1D tensors expected, but got ", a.dim(), "D and ",
              b.dim(), "D tensors");
  BRASA_CHECK(a.numel() == b.numel(), "dot: inconsistent tensor size, expected tensor [", a.numel(),
              "] and src [", b.numel(), "] to have the same number of elements, but got ",
              a.numel(), " and ", b.numel(), " elements respectively");
  BRASA_CHECK(a.dtype() == b.dtype(), "dot: expected both vectors to have same dtype, but found ",
              a.dtype(), " and ", b.dtype());
  return sum(mul(a, b));
}
Tensor vdot(const Tensor& a, const Tensor& b) { return dot(a.is_complex() ? conj(a) : a, b); }

Tensor mv(const Tensor& m, const Tensor& v) {
  BRASA_CHECK(m.dim() == 2 && v.dim() == 1, "mv: expected a matrix and a vector, got ", m.dim(),
              "-D and ", v.dim(), "-D");
  BRASA_CHECK(m.size(1) == v.size(0), "mv: size mismatch, got input (", m.size(0), "x", m.size(1),
              "), vec (", v.size(0), ")");
  return mm(m, v.unsqueeze(1)).squeeze(1);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  BRASA_CHECK(a.dim() == 1 && b.dim() == 1, "outer: expected 1-D vectors, got ", a.dim(), "-D and ",
              b.dim(), "-D");
  return mul(a.unsqueeze(1), b.unsqueeze(0));
}
Tensor ger(const Tensor& a, const Tensor& b) { return outer(a, b); }

// A batched product where some batch dims are broadcast (size 1) on one
// side only: those dims fold into the other side's rows (dims of `a` alone
// into M, of `b` alone into N), so that one product per shared batch index
// does the work of many, and no operand is expanded into a copy. Capsule
// routing's [1, 1152, 10, 16, 8] @ [16, 1152, 1, 8, 1] becomes 1152 products
// of [160, 8] @ [8, 16] instead of 184320 matrix-vector products on a 94 MB
// copy of the weights (and its backward, a sum of as many outer products).
// Undefined when no dim folds.
static Tensor matmul_folding_broadcasts(const Tensor& A, const Tensor& B, IntArrayRef batch) {
  const int64_t nd = static_cast<int64_t>(batch.size());
  const int64_t offset_a = nd - (A.dim() - 2), offset_b = nd - (B.dim() - 2);
  std::vector<int64_t> shared, a_only, b_only;  // batch dims, by kind
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t sa = i >= offset_a ? A.size(i - offset_a) : 1;
    const int64_t sb = i >= offset_b ? B.size(i - offset_b) : 1;
    if (sa == sb)
      shared.push_back(i);
    else
      (sa == 1 ? b_only : a_only).push_back(i);
  }
  if (a_only.empty() && b_only.empty()) return Tensor();
  if (compute_numel(batch) == 0) return Tensor();
  const int64_t M = A.size(-2), K = A.size(-1), N = B.size(-1);
  // Both operands with every batch dim (size 1 where absent), in the order
  // [shared..., own..., the other's..., matrix dims].
  DimVector full_a(static_cast<size_t>(offset_a), 1), full_b(static_cast<size_t>(offset_b), 1);
  for (int64_t s : A.sizes()) full_a.push_back(s);
  for (int64_t s : B.sizes()) full_b.push_back(s);
  std::vector<int64_t> order_a = shared, order_b = shared;
  order_a.insert(order_a.end(), a_only.begin(), a_only.end());
  order_a.insert(order_a.end(), b_only.begin(), b_only.end());
  order_a.push_back(nd), order_a.push_back(nd + 1);  // [S, A-only, (1s), M, K]
  order_b.insert(order_b.end(), a_only.begin(), a_only.end());
  order_b.push_back(nd);  // K
  order_b.insert(order_b.end(), b_only.begin(), b_only.end());
  order_b.push_back(nd + 1);  // [S, (1s), K, B-only, N]
  int64_t S = 1, Ma = 1, Nb = 1;
  for (int64_t i : shared) S *= batch[i];
  for (int64_t i : a_only) Ma *= batch[i];
  for (int64_t i : b_only) Nb *= batch[i];
  Tensor a3 = A.view(full_a).permute(order_a).reshape({S, Ma * M, K});
  Tensor b3 = B.view(full_b).permute(order_b).reshape({S, K, Nb * N});
  // [S, Ma * M, Nb * N] as [shared..., a-only..., M, b-only..., N], then in
  // the batch's own order.
  DimVector parts;
  for (int64_t i : shared) parts.push_back(batch[i]);
  for (int64_t i : a_only) parts.push_back(batch[i]);
  parts.push_back(M);
  for (int64_t i : b_only) parts.push_back(batch[i]);
  parts.push_back(N);
  std::vector<int64_t> where(
      static_cast<size_t>(nd + 2));  // dim of `parts` holding each output dim
  int64_t at = 0;
  for (int64_t i : shared) where[i] = at++;
  for (int64_t i : a_only) where[i] = at++;
  where[nd] = at++;
  for (int64_t i : b_only) where[i] = at++;
  where[nd + 1] = at++;
  return bmm(a3, b3).view(parts).permute(where).contiguous();
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  int64_t da = a.dim(), db = b.dim();
  BRASA_CHECK(da > 0 && db > 0,
              "matmul: both arguments to matmul need to be at least 1D, but they are ", da,
              "D and ", db, "D");
  if (a.is_complex() || b.is_complex()) return detail::complex_matmul(a, b, matmul);
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mv(a, b);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);
  if (da >= 3 && db <= 2) {
    // Fold the batch dims of a into its rows: one big mm.
    BRASA_CHECK(a.size(-1) == b.size(0), "matmul: shapes ", a.sizes(), " and ", b.sizes(),
                " cannot be multiplied (", a.size(-1), " != ", b.size(0), ")");
    Tensor a2 = a.reshape({-1, a.size(-1)});
    Tensor r = db == 1 ? mv(a2, b) : mm(a2, b);
    DimVector shape(a.sizes().begin(), a.sizes().end() - 1);
    if (db == 2) shape.push_back(b.size(1));
    return r.view(shape);
  }
  // Batched with broadcast batch dims.
  Tensor A = da == 1 ? a.unsqueeze(0) : a, B = db == 1 ? b.unsqueeze(1) : b;
  int64_t M = A.size(-2), K = A.size(-1), K2 = B.size(-2), N = B.size(-1);
  BRASA_CHECK(K == K2, "matmul: shapes ", a.sizes(), " and ", b.sizes(), " cannot be multiplied (",
              K, " != ", K2, ")");
  IntArrayRef ba(A.sizes().data(), A.dim() - 2), bb(B.sizes().data(), B.dim() - 2);
  DimVector batch = detail::broadcast_shapes("matmul", ba, bb);
  if (da >= 2 && db >= 2)
    if (Tensor r = matmul_folding_broadcasts(A, B, batch); r.defined()) return r;
  int64_t nb = compute_numel(batch);
  DimVector ea = batch, eb = batch;
  ea.push_back(M), ea.push_back(K), eb.push_back(K), eb.push_back(N);
  Tensor A3 = A.expand(ea).reshape({nb, M, K}), B3 = B.expand(eb).reshape({nb, K, N});
  Tensor r = bmm(A3, B3);
  DimVector shape = batch;
  if (da > 1) shape.push_back(M);
  if (db > 1) shape.push_back(N);
  return r.view(shape);
}

Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha) {
  check_mm("addmm", m1, m2);
  autograd::Recorder r(kAddmmBackward, self, m1, m2);
  Tensor c = empty({m1.size(0), m2.size(1)}, m1.options());
  bool use_self = beta.toDouble() != 0.0;
  if (use_self) {
    try {
      detail::copy_kernel(c, self.expand(c.sizes()));
    } catch (const Error&) {
      BRASA_ERROR("addmm: self of shape ", self.sizes(),
                  " cannot be broadcast to the product's shape ", c.sizes());
    }
  }
  gemm(m1, m2, c, alpha, use_self ? beta : Scalar(0));
  if (r) {
    const double be = beta.toDouble(), al = alpha.toDouble();
    r.save(m1, m2).finish(c, [be, al](FormulaNode& n, const variable_list& g) {
      variable_list d(3);
      if (n.needs(0)) d[0] = be == 1.0 ? g[0] : g[0] * be;  // the engine sums it to self's shape
      const Tensor ga = al == 1.0 ? g[0] : g[0] * al, m1 = n.saved(0), m2 = n.saved(1);
      if (n.needs(1) && !add_mm_grad_into_leaf(n, 1, true, ga, m1, m2))
        d[1] = mm_mat1_grad(ga, m1, m2);
      if (n.needs(2) && !add_mm_grad_into_leaf(n, 2, false, ga, m1, m2))
        d[2] = mm_mat2_grad(ga, m1, m2);
      return d;
    });
  }
  return c;
}

Tensor addmv(const Tensor& self, const Tensor& m, const Tensor& v, const Scalar& beta,
             const Scalar& alpha) {
  return addmm(self.dim() == 1 ? self.unsqueeze(1) : self, m, v.unsqueeze(1), beta, alpha)
      .squeeze(1);
}

namespace {
// beta * self + alpha * product; beta = 0 ignores self (NaN included).
Tensor scaled_sum(const Tensor& self, const Scalar& beta, const Tensor& product,
                  const Scalar& alpha) {
  Tensor scaled_product = mul(product, alpha);
  return beta.toDouble() == 0.0 ? scaled_product : add(mul(self, beta), scaled_product);
}
}  // namespace

Tensor addbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
              const Scalar& alpha) {
  return scaled_sum(self, beta, sum(bmm(b1, b2), {0}), alpha);
}

Tensor baddbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
               const Scalar& alpha) {
  return scaled_sum(self, beta, bmm(b1, b2), alpha);
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
            const Scalar& alpha) {
  BRASA_CHECK(vec1.dim() == 1 && vec2.dim() == 1, "addr: expected 1-D vectors, got ", vec1.dim(),
              "-D and ", vec2.dim(), "-D");
  BRASA_CHECK(vec1.dtype() == vec2.dtype(),
              "addr: expected vec1 and vec2 to have the same dtype, but got: ", vec1.dtype(),
              " != ", vec2.dtype());
  const std::vector<int64_t> shape = {vec1.size(0), vec2.size(0)};
  BRASA_CHECK(self.dim() <= 2 &&
                  (self.dim() < 1 || self.size(-1) == 1 || self.size(-1) == shape[1]) &&
                  (self.dim() < 2 || self.size(0) == 1 || self.size(0) == shape[0]),
              "addr: self of shape ", self.sizes(),
              " cannot be broadcast to the outer product's shape ", IntArrayRef(shape));
  return scaled_sum(self, beta, outer(vec1, vec2), alpha);
}

namespace {
// Writes `compute(self)` into self (recorded as an in-place op under autograd).
template <class Compute>
Tensor& assign_result(const char* op, Tensor& self, Compute&& compute, const Tensor& a,
                      const Tensor& b) {
  auto checked = [&](const Tensor& s) {
    Tensor v = compute(s);
    BRASA_CHECK(v.sizes() == s.sizes(), op, ": the result of shape ", v.sizes(),
                " cannot be written into self of shape ", s.sizes());
    return v;
  };
  return autograd::inplace(
      op, self,
      [&] {
        detail::copy_kernel(self, checked(self));
        self.bump_version();
      },
      checked, a, b);
}
}  // namespace

Tensor& detail::addmm_inplace(Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
                              const Scalar& alpha) {
  check_mm("addmm_", m1, m2);
  BRASA_CHECK(self.dim() == 2 && self.size(0) == m1.size(0) && self.size(1) == m2.size(1),
              "addmm_: self of shape ", self.sizes(), " does not match the product's shape [",
              m1.size(0), ", ", m2.size(1), "]");
  BRASA_CHECK(self.dtype() == m1.dtype(),
              "addmm_: expected self and mat1 to have the same dtype, but got: ", self.dtype(),
              " != ", m1.dtype());
  // Without autograd, a contiguous self that shares no storage with the
  // operands is the GEMM's output; otherwise the product is computed apart.
  if (!autograd::needs_grad(self, m1, m2) && self.is_contiguous() && !self.is_alias_of(m1) &&
      !self.is_alias_of(m2)) {
    gemm(m1, m2, self, alpha, beta);
    self.bump_version();
    return self;
  }
  return assign_result(
      "addmm_", self, [&](const Tensor& s) { return addmm(s, m1, m2, beta, alpha); }, m1, m2);
}
Tensor& detail::addmv_inplace(Tensor& self, const Tensor& m, const Tensor& v, const Scalar& beta,
                              const Scalar& alpha) {
  return assign_result(
      "addmv_", self, [&](const Tensor& s) { return addmv(s, m, v, beta, alpha); }, m, v);
}
Tensor& detail::addr_inplace(Tensor& self, const Tensor& vec1, const Tensor& vec2,
                             const Scalar& beta, const Scalar& alpha) {
  return assign_result(
      "addr_", self, [&](const Tensor& s) { return addr(s, vec1, vec2, beta, alpha); }, vec1, vec2);
}
Tensor& detail::addbmm_inplace(Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
                               const Scalar& alpha) {
  return assign_result(
      "addbmm_", self, [&](const Tensor& s) { return addbmm(s, b1, b2, beta, alpha); }, b1, b2);
}
Tensor& detail::baddbmm_inplace(Tensor& self, const Tensor& b1, const Tensor& b2,
                                const Scalar& beta, const Scalar& alpha) {
  return assign_result(
      "baddbmm_", self, [&](const Tensor& s) { return baddbmm(s, b1, b2, beta, alpha); }, b1, b2);
}

// ---- einsum ----
namespace {

struct Operand {
  Tensor t;
  std::vector<int> labels;  // one per dim; ellipsis dims get labels >= 256
};

// Sums out dims whose labels no longer matter.
void sum_out(Operand& op, const std::vector<int>& keep) {
  DimVector dims;
  std::vector<int> labels;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (std::find(keep.begin(), keep.end(), op.labels[i]) == keep.end())
      dims.push_back(static_cast<int64_t>(i));
    else
      labels.push_back(op.labels[i]);
  }
  if (!dims.empty()) op.t = sum(op.t, dims);
  op.labels = labels;
}

Operand contract(const Operand& a, const Operand& b, const std::vector<int>& keep) {
  auto has = [](const std::vector<int>& v, int l) {
    return std::find(v.begin(), v.end(), l) != v.end();
  };
  std::vector<int> batch, aonly, bonly, con;
  for (int l : a.labels) {
    if (has(b.labels, l))
      (has(keep, l) ? batch : con).push_back(l);
    else
      aonly.push_back(l);
  }
  for (int l : b.labels)
    if (!has(a.labels, l)) bonly.push_back(l);
  auto pos = [](const std::vector<int>& v, int l) {
    return static_cast<int64_t>(std::find(v.begin(), v.end(), l) - v.begin());
  };
  DimVector pa, pb, bsz;
  int64_t M = 1, N = 1, K = 1;
  for (int l : batch) {
    int64_t sa = a.t.size(pos(a.labels, l)), sb = b.t.size(pos(b.labels, l));
    BRASA_CHECK(sa == sb || sa == 1 || sb == 1, "einsum: operands do not broadcast for a label (",
                sa, " vs ", sb, ")");
    bsz.push_back(std::max(sa, sb));
    pa.push_back(pos(a.labels, l)), pb.push_back(pos(b.labels, l));
  }
  DimVector asz = bsz, bsz2 = bsz;
  for (int l : aonly)
    pa.push_back(pos(a.labels, l)), M *= a.t.size(pos(a.labels, l)),
        asz.push_back(a.t.size(pos(a.labels, l)));
  for (int l : con) {
    int64_t sa = a.t.size(pos(a.labels, l)), sb = b.t.size(pos(b.labels, l));
    BRASA_CHECK(sa == sb, "einsum: subscript is repeated for operands with different sizes (", sa,
                " vs ", sb, ")");
    pa.push_back(pos(a.labels, l)), K *= sa, asz.push_back(sa);
  }
  for (int l : con) pb.push_back(pos(b.labels, l)), bsz2.push_back(b.t.size(pos(b.labels, l)));
  for (int l : bonly)
    pb.push_back(pos(b.labels, l)), N *= b.t.size(pos(b.labels, l)),
        bsz2.push_back(b.t.size(pos(b.labels, l)));
  int64_t nb = compute_numel(bsz);
  Tensor A = a.t.permute(pa).expand(asz).reshape({nb, M, K});
  Tensor B = b.t.permute(pb).expand(bsz2).reshape({nb, K, N});
  Tensor r = bmm(A.dtype() == B.dtype() ? A : A.to(promoteTypes(A.dtype(), B.dtype())),
                 B.dtype() == A.dtype() ? B : B.to(promoteTypes(A.dtype(), B.dtype())));
  DimVector shape = bsz;
  Operand out;
  out.labels = batch;
  for (int l : aonly) shape.push_back(a.t.size(pos(a.labels, l))), out.labels.push_back(l);
  for (int l : bonly) shape.push_back(b.t.size(pos(b.labels, l))), out.labels.push_back(l);
  out.t = r.reshape(shape);
  return out;
}

std::vector<int> parse_labels(const std::string& s, int64_t ndim, int64_t& ell_dims,
                              bool is_output) {
  std::vector<int> labels;
  size_t i = 0;
  int64_t letters = 0;
  for (char ch : s) letters += std::isalpha(static_cast<unsigned char>(ch)) ? 1 : 0;
  while (i < s.size()) {
    char ch = s[i];
    if (ch == '.') {
      BRASA_CHECK(s.compare(i, 3, "...") == 0,
                  "einsum: found '.' that is not part of any ellipsis in '", s, "'");
      int64_t n = is_output ? ell_dims : ndim - letters;
      BRASA_CHECK(n >= 0, "einsum: the operand has ", ndim, " dims but the subscript '", s,
                  "' needs more");
      if (!is_output) ell_dims = std::max(ell_dims, n);
      for (int64_t k = 0; k < n; ++k) labels.push_back(static_cast<int>(256 + (ell_dims - n) + k));
      i += 3;
    } else {
      BRASA_CHECK(std::isalpha(static_cast<unsigned char>(ch)), "einsum: invalid subscript '", ch,
                  "' given in the equation string, subscripts must be in [a-zA-Z]");
      labels.push_back(static_cast<unsigned char>(ch));
      ++i;
    }
  }
  return labels;
}

}  // namespace

Tensor einsum(const std::string& eq_in, TensorList operands) {
  std::string eq;
  for (char c : eq_in)
    if (c != ' ') eq += c;
  auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t s = 0;;) {
    auto c = lhs.find(',', s);
    terms.push_back(lhs.substr(s, c == std::string::npos ? std::string::npos : c - s));
    if (c == std::string::npos) break;
    s = c + 1;
  }
  BRASA_CHECK(terms.size() == operands.size(), "einsum: the equation '", eq_in, "' names ",
              terms.size(), " operands but ", operands.size(), " were given");
  std::vector<Operand> ops;
  std::map<int, int> label_count;  // before diagonals merge repeated labels
  int64_t ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    Operand op{operands[i], parse_labels(terms[i], operands[i].dim(), ell, false)};
    for (int l : op.labels) label_count[l]++;
    BRASA_CHECK(static_cast<int64_t>(op.labels.size()) == operands[i].dim(),
                "einsum: the subscript '", terms[i], "' has ", op.labels.size(),
                " labels but operand ", i, " has ", operands[i].dim(), " dims");
    // Repeated labels in one operand take the diagonal.
    for (size_t x = 0; x < op.labels.size(); ++x)
      for (size_t y = x + 1; y < op.labels.size(); ++y)
        if (op.labels[x] == op.labels[y]) {
          op.t = diagonal(op.t, 0, static_cast<int64_t>(x), static_cast<int64_t>(y))
                     .movedim(-1, static_cast<int64_t>(x));
          op.labels.erase(op.labels.begin() + y);
          --y;
        }
    ops.push_back(op);
  }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    out = parse_labels(eq.substr(arrow + 2), 0, ell, true);
  } else {
    for (int64_t k = 0; k < ell; ++k) out.push_back(static_cast<int>(256 + k));
    for (auto [l, c] : label_count)
      if (l < 256 && c == 1) out.push_back(l);
  }
  Operand acc = ops[0];
  for (size_t i = 0; i <= ops.size(); ++i) {
    // Labels still needed: the output's and those of operands not yet used.
    std::vector<int> keep = out;
    for (size_t j = i + 1; j < ops.size(); ++j)
      keep.insert(keep.end(), ops[j].labels.begin(), ops[j].labels.end());
    if (i == 0) {
      if (ops.size() > 1) keep.insert(keep.end(), ops[1].labels.begin(), ops[1].labels.end());
      sum_out(acc, keep);
      continue;
    }
    if (i == ops.size()) break;
    Operand next = ops[i];
    std::vector<int> keep_next = keep;
    keep_next.insert(keep_next.end(), acc.labels.begin(), acc.labels.end());
    sum_out(next, keep_next);
    acc = contract(acc, next, keep);
  }
  sum_out(acc, out);
  DimVector perm;
  for (int l : out) {
    auto it = std::find(acc.labels.begin(), acc.labels.end(), l);
    BRASA_CHECK(it != acc.labels.end(), "einsum: output subscript ",
                static_cast<char>(l < 256 ? l : '.'),
                " does not appear in the equation for any input operand");
    perm.push_back(static_cast<int64_t>(it - acc.labels.begin()));
  }
  Tensor r = acc.t.permute(perm);
  return r;
}

Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b) {
  BRASA_CHECK(dims_a.size() == dims_b.size(),
              "tensordot: both dimension lists should have same length");
  std::string ea, eb, eo;
  for (int64_t i = 0; i < a.dim(); ++i) ea += static_cast<char>('a' + i);
  for (int64_t i = 0; i < b.dim(); ++i) eb += static_cast<char>('A' + i);
  for (size_t k = 0; k < dims_a.size(); ++k)
    eb[maybe_wrap_dim(dims_b[k], b.dim(), "tensordot")] =
        ea[maybe_wrap_dim(dims_a[k], a.dim(), "tensordot")];
  for (char c : ea)
    if (eb.find(c) == std::string::npos) eo += c;
  for (char c : eb)
    if (ea.find(c) == std::string::npos) eo += c;
  return einsum(ea + "," + eb + "->" + eo, {a, b});
}

}  // namespace brasa
