#include <brasa/ops/aliases.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/split_combine.h>

#include <algorithm>
#include <cmath>

namespace brasa {

using detail::check_defined;

namespace {
// Views of self along dim between consecutive cut points (clamped to the size).
std::vector<Tensor> split_at(const Tensor& self, IntArrayRef cuts, int64_t dim) {
  const int64_t n = self.size(dim);
  std::vector<Tensor> parts;
  int64_t begin = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    int64_t end = i < cuts.size() ? std::clamp<int64_t>(cuts[i], 0, n) : n;
    end = std::max(end, begin);
    parts.push_back(narrow(self, dim, begin, end - begin));
    begin = end;
  }
  return parts;
}
int64_t split_dim(const char* op, const Tensor& self, int64_t dim) {
  check_defined(op, self);
  BRASA_CHECK(self.dim() >= 1, op, ": expected at least a 1-dimensional tensor, got shape ",
              self.sizes());
  return maybe_wrap_dim(dim, self.dim(), op);
}
// hsplit/vsplit/dsplit by a number of sections that must divide the dim.
void check_min_dims(const char* op, const Tensor& self, int64_t min_dims) {
  check_defined(op, self);
  BRASA_CHECK(self.dim() >= min_dims, op, ": requires a tensor with at least ", min_dims,
              " dimension", min_dims > 1 ? "s" : "", ", but got a tensor with ", self.dim(),
              " dimensions");
}
std::vector<Tensor> split_even(const char* op, const Tensor& self, int64_t sections,
                               int64_t min_dims, int64_t dim) {
  check_min_dims(op, self, min_dims);
  BRASA_CHECK(sections > 0 && self.size(dim) % sections == 0, op,
              ": attempted to split along dimension ", dim, ", but the size of the dimension ",
              self.size(dim), " is not divisible by the split_size ", sections, "!");
  return tensor_split(self, sections, dim);
}
std::vector<Tensor> split_indices(const char* op, const Tensor& self, IntArrayRef indices,
                                  int64_t min_dims, int64_t dim) {
  check_min_dims(op, self, min_dims);
  return tensor_split(self, indices, dim);
}
Tensor triangle_indices(const char* op, int64_t row, int64_t col, int64_t offset, bool lower,
                        const TensorOptions& options) {
  BRASA_CHECK(row >= 0 && col >= 0, op, ": row and col must be non-negative, got ", row, " and ",
              col);
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < row; ++i)
    for (int64_t j = 0; j < col; ++j)
      if (lower ? j - i <= offset : j - i >= offset) {
        rows.push_back(i);
        cols.push_back(j);
      }
  const int64_t n = static_cast<int64_t>(rows.size());
  rows.insert(rows.end(), cols.begin(), cols.end());
  return tensor(rows).reshape({2, n}).to(options.dtype()).to(options.device());
}
}  // namespace

std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim) {
  dim = split_dim("tensor_split", self, dim);
  BRASA_CHECK(sections > 0, "tensor_split: number of sections must be larger than 0, got ",
              sections);
  const int64_t n = self.size(dim), base = n / sections, extra = n % sections;
  std::vector<int64_t> cuts;
  int64_t at = 0;
  for (int64_t i = 0; i + 1 < sections; ++i) cuts.push_back(at += base + (i < extra ? 1 : 0));
  return split_at(self, cuts, dim);
}
std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim) {
  dim = split_dim("tensor_split", self, dim);
  return split_at(self, indices, dim);
}
std::vector<Tensor> tensor_split(const Tensor& self, const Tensor& indices_or_sections,
                                 int64_t dim) {
  const Tensor& t = indices_or_sections;
  BRASA_CHECK(t.defined() && t.device().type() == kCPU && t.scalar_type() == kLong && t.dim() <= 1,
              "tensor_split: expected tensor_indices_or_sections to be a zero-dimensional or ",
              "one-dimensional int64 tensor on the CPU, got ",
              t.defined() ? t.scalar_type() : ScalarType::Undefined, " of shape ",
              t.defined() ? t.sizes() : IntArrayRef{});
  if (t.dim() == 0) return tensor_split(self, t.item<int64_t>(), dim);
  Tensor c = t.contiguous();
  return tensor_split(self, IntArrayRef(c.data_ptr<int64_t>(), c.numel()), dim);
}

std::vector<Tensor> hsplit(const Tensor& self, int64_t sections) {
  return split_even("torch.hsplit", self, sections, 1, self.dim() == 1 ? 0 : 1);
}
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices) {
  return split_indices("torch.hsplit", self, indices, 1, self.dim() == 1 ? 0 : 1);
}
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections) {
  return split_even("torch.vsplit", self, sections, 2, 0);
}
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices) {
  return split_indices("torch.vsplit", self, indices, 2, 0);
}
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections) {
  return split_even("torch.dsplit", self, sections, 3, 2);
}
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices) {
  return split_indices("torch.dsplit", self, indices, 3, 2);
}

Tensor dstack(TensorList tensors) {
  BRASA_CHECK(!tensors.empty(), "dstack expects a non-empty TensorList");
  std::vector<Tensor> t3;
  for (const Tensor& t : tensors) t3.push_back(atleast_3d(t));
  return cat(t3, 2);
}

Tensor block_diag(TensorList tensors) {
  std::vector<Tensor> blocks;
  int64_t cols = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    check_defined("torch.block_diag", t);
    BRASA_CHECK(t.dim() <= 2, "torch.block_diag: Input tensors must have 2 or fewer dimensions. ",
                "Input ", i, " has ", t.dim(), " dimensions");
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, -1}));
    cols += blocks.back().size(1);
  }
  if (blocks.empty()) return empty({1, 0});
  ScalarType dt = blocks[0].scalar_type();
  for (const Tensor& b : blocks) dt = promoteTypes(dt, b.scalar_type());
  std::vector<Tensor> rows;
  int64_t before = 0;
  for (const Tensor& b : blocks) {
    const int64_t r = b.size(0), c = b.size(1);
    auto o = b.options().dtype(dt);
    rows.push_back(cat({zeros({r, before}, o), b.to(dt), zeros({r, cols - before - c}, o)}, 1));
    before += c;
  }
  return cat(rows, 0);
}

Tensor cartesian_prod(TensorList tensors) {
  BRASA_CHECK(!tensors.empty(), "cartesian_prod: expects a non-empty TensorList");
  for (const Tensor& t : tensors) {
    check_defined("cartesian_prod", t);
    BRASA_CHECK(t.dim() == 1, "Expect a 1D vector, but got shape ", t.sizes());
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = meshgrid(tensors, "ij"), columns;
  for (const Tensor& g : grids) columns.push_back(g.reshape({-1}));
  return stack(columns, 1);
}

Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  check_defined("combinations", self);
  BRASA_CHECK(self.dim() == 1, "Expect a 1D vector, but got shape ", self.sizes());
  BRASA_CHECK(r >= 0, "Expect a non-negative number, but got ", r);
  if (r == 0) return empty({0}, self.options());
  const int64_t n = self.size(0);
  // Each combination's positions, ascending (non-descending with replacement).
  std::vector<std::vector<int64_t>> picks(r);
  std::vector<int64_t> at(r, 0);
  if (!with_replacement)
    for (int64_t k = 0; k < r; ++k) at[k] = k;
  auto valid = [&] { return r == 0 || at[r - 1] < n; };
  while (valid()) {
    for (int64_t k = 0; k < r; ++k) picks[k].push_back(at[k]);
    // Advance the rightmost position that can still move, reset those after it.
    int64_t k = r - 1;
    while (k >= 0) {
      const int64_t limit = with_replacement ? n - 1 : n - (r - k);
      if (at[k] < limit) break;
      --k;
    }
    if (k < 0) break;
    ++at[k];
    for (int64_t j = k + 1; j < r; ++j) at[j] = with_replacement ? at[k] : at[j - 1] + 1;
  }
  std::vector<Tensor> columns;
  for (int64_t k = 0; k < r; ++k) {
    Tensor idx = tensor(picks[k]).to(self.device());
    columns.push_back(index_select(self, 0, idx));
  }
  return stack(columns, 1);
}

Tensor diagflat(const Tensor& self, int64_t offset) {
  check_defined("diagflat", self);
  return diag(self.reshape({-1}), offset);
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  check_defined("take_along_dim", self);
  check_defined("take_along_dim", indices);
  BRASA_CHECK(indices.scalar_type() == kLong,
              "torch.take_along_dim(): dtype of indices should be Long but got ",
              indices.scalar_type());
  if (!dim) return gather(self.reshape({-1}), 0, indices.reshape({-1}));
  BRASA_CHECK(self.dim() == indices.dim(),
              "torch.take_along_dim(): input and indices should have the same number of ",
              "dimensions, but got ", self.dim(), " dimensions for input, and ", indices.dim(),
              " dimensions for indices");
  const int64_t d = maybe_wrap_dim(*dim, self.dim(), "take_along_dim");
  // Broadcast every dim but d.
  std::vector<int64_t> s(self.sizes().begin(), self.sizes().end());
  std::vector<int64_t> i(indices.sizes().begin(), indices.sizes().end());
  std::vector<int64_t> si = s, ii = i;
  si[d] = ii[d] = 1;
  DimVector b = detail::broadcast_shapes("take_along_dim", si, ii);
  std::vector<int64_t> common(b.begin(), b.end());
  std::vector<int64_t> self_shape = common, idx_shape = common;
  self_shape[d] = s[d];
  idx_shape[d] = i[d];
  return gather(self.expand(self_shape), d, indices.expand(idx_shape));
}

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& options) {
  return triangle_indices("tril_indices", row, col, offset, true, options);
}
Tensor triu_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& options) {
  return triangle_indices("triu_indices", row, col, offset, false, options);
}

Tensor range(const Scalar& start, const Scalar& end, const TensorOptions& options) {
  return range(start, end, 1, options);
}
Tensor range(const Scalar& start, const Scalar& end, const Scalar& step,
             const TensorOptions& options) {
  const double a = start.to<double>(), b = end.to<double>(), s = step.to<double>();
  BRASA_CHECK(s != 0, "range: step must be nonzero");
  BRASA_CHECK(std::isfinite(a) && std::isfinite(b), "range: unsupported range: ", a, " -> ", b);
  BRASA_CHECK((s > 0 && b >= a) || (s < 0 && b <= a),
              "range: upper bound and larger bound inconsistent with step sign");
  const int64_t n = static_cast<int64_t>(std::floor((b - a) / s)) + 1;
  return (arange(n, TensorOptions().dtype(kDouble)) * s + a)
      .to(options.dtype())
      .to(options.device());
}

Tensor vander(const Tensor& x, std::optional<int64_t> N, bool increasing) {
  check_defined("vander", x);
  BRASA_CHECK(x.dim() == 1, "x must be a one-dimensional tensor, got shape ", x.sizes());
  const int64_t n = N.value_or(x.size(0));
  BRASA_CHECK(n >= 0, "N must be non-negative, got ", n);
  ScalarType dt = x.scalar_type() == kBool ? kLong : promoteTypes(x.scalar_type(), kLong);
  if (x.is_floating_point()) dt = x.scalar_type();
  if (n == 0) return empty({x.size(0), 0}, x.options().dtype(dt));
  Tensor xc = x.to(dt).unsqueeze(1);
  // Powers by a running product (no pow at 0 ** 0, whose derivative is undefined).
  Tensor powers = ones({x.size(0), 1}, xc.options());
  if (n > 1) powers = cat({powers, cumprod(xc.expand({x.size(0), n - 1}), 1)}, 1);
  return increasing ? powers : powers.flip({1});
}

Tensor inner(const Tensor& self, const Tensor& other) {
  check_defined("inner", self);
  check_defined("inner", other);
  if (self.dim() == 0 || other.dim() == 0) return self * other;
  BRASA_CHECK(self.size(-1) == other.size(-1),
              "inner() the last dimension must match on both input tensors but got shapes ",
              self.sizes(), " and ", other.sizes());
  const int64_t k = self.size(-1);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - 1);
  shape.insert(shape.end(), other.sizes().begin(), other.sizes().end() - 1);
  return mm(self.reshape({-1, k}), other.reshape({-1, k}).t()).reshape(shape);
}

Tensor chain_matmul(TensorList matrices) {
  BRASA_CHECK(!matrices.empty(), "chain_matmul(): Expected one or more matrices");
  for (const Tensor& m : matrices) {
    check_defined("chain_matmul", m);
    BRASA_CHECK(m.dim() == 2, "chain_matmul(): Expected 2-D matrices, got shape ", m.sizes());
  }
  Tensor out = matrices[0];
  for (size_t i = 1; i < matrices.size(); ++i) out = mm(out, matrices[i]);
  return matrices.size() == 1 ? out.clone() : out;
}

Tensor dist(const Tensor& self, const Tensor& other, const Scalar& p) {
  check_defined("dist", self);
  check_defined("dist", other);
  return norm(self - other, p);
}

Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  check_defined("renorm", self);
  BRASA_CHECK(self.is_floating_point(), "renorm: expected a floating tensor, got ",
              self.scalar_type());
  BRASA_CHECK(p.to<double>() > 0, "renorm: non-positive-norm not supported");
  BRASA_CHECK(maxnorm.to<double>() >= 0, "renorm: expected maxnorm to be >= 0 but got ",
              maxnorm.to<double>());
  BRASA_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim(),
              " dimensions");
  dim = maybe_wrap_dim(dim, self.dim(), "renorm");
  std::vector<int64_t> others;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != dim) others.push_back(d);
  Tensor norms = norm(self, p, others, true);
  const double m = maxnorm.to<double>();
  // 1e-7 keeps the scale finite, as in PyTorch; the gradient flows through the norms too.
  Tensor scale = where(norms > m, (norms + 1e-7).reciprocal() * m, ones_like(norms));
  return self * scale;
}

Tensor norm_except_dim(const Tensor& v, int64_t pow, int64_t dim) {
  check_defined("norm_except_dim", v);
  if (dim == -1) return norm(v, pow);
  dim = maybe_wrap_dim(dim, v.dim(), "norm_except_dim");
  std::vector<int64_t> others;
  for (int64_t d = 0; d < v.dim(); ++d)
    if (d != dim) others.push_back(d);
  return norm(v, pow, others, true);
}

Tensor frobenius_norm(const Tensor& self) {
  check_defined("frobenius_norm", self);
  return norm(self, 2);
}
Tensor frobenius_norm(const Tensor& self, IntArrayRef dim, bool keepdim) {
  check_defined("frobenius_norm", self);
  BRASA_CHECK(dim.size() <= 2, "frobenius_norm: expected at most 2 dims, got ", dim.size());
  if (dim.empty())
    return keepdim ? norm(self, 2).reshape(std::vector<int64_t>(self.dim(), 1)) : norm(self, 2);
  return norm(self, 2, dim, keepdim);
}

}  // namespace brasa
