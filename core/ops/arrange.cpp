#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/unary.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>

#include <cmath>

namespace brasa {

namespace {

// A bool mask along `dim` of a tensor of rank `ndim`: true at `index`,
// shaped [1, ..., n, ..., 1] to broadcast.
// wraps: negative indices count from the end (index_fill), else they are an
// error (index_copy), as PyTorch.
Tensor mask_along(int64_t n, int64_t dim, int64_t ndim, const Tensor& index, const char* op,
                  bool wraps) {
  BRASA_CHECK(index.scalar_type() == kLong || index.scalar_type() == kInt, op,
              ": index must be an integer tensor, got ", index.scalar_type());
  BRASA_CHECK(index.dim() <= 1, op, ": index must be 0-D or 1-D, got shape ", index.sizes());
  Tensor mask = zeros({n}, TensorOptions().dtype(kBool).device(index.device()));
  if (index.numel() > 0) {
    Tensor idx = index.reshape({-1}).to(kLong);
    const int64_t lo = idx.min().item<int64_t>(), hi = idx.max().item<int64_t>();
    BRASA_CHECK(lo >= (wraps ? -n : 0) && hi < n, op, ": index ", hi >= n ? hi : lo,
                " is out of bounds for dimension ", dim, " with size ", n);
    mask.index_put_({idx}, Scalar(true));
  }
  std::vector<int64_t> shape(static_cast<size_t>(std::max<int64_t>(ndim, 1)), 1);
  if (ndim > 0) shape[static_cast<size_t>(dim)] = n;
  return mask.view(shape);
}

}  // namespace

Tensor trace(const Tensor& self) {
  BRASA_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return self.diagonal().sum();
}

Tensor kron(const Tensor& a, const Tensor& b) {
  const int64_t nd = std::max(a.dim(), b.dim());
  std::vector<int64_t> as(static_cast<size_t>(nd - a.dim()), 1),
      bs(static_cast<size_t>(nd - b.dim()), 1);
  for (int64_t s : a.sizes()) as.push_back(s);
  for (int64_t s : b.sizes()) bs.push_back(s);
  // [a0, 1, a1, 1, ...] * [1, b0, 1, b1, ...] -> [a0, b0, a1, b1, ...] -> [a0*b0, a1*b1, ...]
  std::vector<int64_t> av, bv, out;
  for (int64_t d = 0; d < nd; ++d) {
    av.insert(av.end(), {as[d], 1});
    bv.insert(bv.end(), {1, bs[d]});
    out.push_back(as[d] * bs[d]);
  }
  return (a.reshape(av) * b.reshape(bv)).reshape(out);
}

Tensor diff(const Tensor& self, int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append) {
  BRASA_CHECK(self.dim() >= 1, "diff: expects input to be at least one-dimensional");
  BRASA_CHECK(n >= 0, "diff: order must be non-negative but got ", n);
  dim = maybe_wrap_dim(dim, self.dim(), "diff");
  Tensor x = self;
  if (prepend || append) {
    std::vector<Tensor> parts;
    for (const auto* part : {&prepend, &append}) {
      if (!*part) continue;
      BRASA_CHECK((*part)->dim() == self.dim(), "diff: expected prepend/append to have ",
                  self.dim(), " dimensions like the input, got ", (*part)->dim());
    }
    if (prepend) parts.push_back(*prepend);
    parts.push_back(self);
    if (append) parts.push_back(*append);
    x = cat(parts, dim);
  }
  for (int64_t i = 0; i < n && x.size(dim) > 0; ++i) {
    const int64_t len = x.size(dim) - 1;
    Tensor hi = x.narrow(dim, 1, len), lo = x.narrow(dim, 0, len);
    x = x.scalar_type() == kBool ? hi.ne(lo) : hi - lo;
  }
  return x;
}

Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  BRASA_CHECK(dims.size() == 2,
              "rot90: expected total rotation dims == 2, but got dims = ", dims.size());
  BRASA_CHECK(self.dim() >= 2,
              "rot90: expected total dims >= 2, but got total dims = ", self.dim());
  const int64_t d0 = maybe_wrap_dim(dims[0], self.dim(), "rot90");
  const int64_t d1 = maybe_wrap_dim(dims[1], self.dim(), "rot90");
  BRASA_CHECK(d0 != d1, "rot90: expected rotation dims to be different, but got dim0 = ", d0,
              " and dim1 = ", d1);
  switch (((k % 4) + 4) % 4) {
    case 1:
      return self.flip({d1}).transpose(d0, d1);
    case 2:
      return self.flip({d0, d1});
    case 3:
      return self.flip({d0}).transpose(d0, d1);
    default:
      return self.clone();
  }
}

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  BRASA_CHECK(self.dim() >= 1, "diag_embed: expected a tensor of at least one dimension");
  const int64_t rank = self.dim() + 1;
  const int64_t d1 = maybe_wrap_dim(dim1, rank, "diag_embed");
  const int64_t d2 = maybe_wrap_dim(dim2, rank, "diag_embed");
  BRASA_CHECK(d1 != d2, "diag_embed: diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n = self.size(-1), m = n + std::abs(offset);
  // Entry t goes to (t, t + offset) of an m x m plane, flattened: t * m + t + offset
  // (offset >= 0) or (t - offset) * m + t.
  Tensor t = arange(n, TensorOptions().dtype(kLong).device(self.device()));
  Tensor at = offset >= 0 ? t * (m + 1) + offset : t * (m + 1) - offset * m;
  std::vector<int64_t> flat = self.sizes().vec();
  flat.back() = m * m;
  std::vector<std::optional<Tensor>> where_(static_cast<size_t>(self.dim()));
  where_.back() = at;
  Tensor planes = index_put(zeros(flat, self.options()), where_, self);
  std::vector<int64_t> shape = self.sizes().vec();
  shape.back() = m;
  shape.push_back(m);
  planes = planes.view(shape);  // [..., m (rows), m (cols)]
  // Rows go to d1, columns to d2, the other dims keep their order.
  std::vector<int64_t> perm(static_cast<size_t>(rank), -1);
  perm[d1] = rank - 2;
  perm[d2] = rank - 1;
  int64_t next = 0;
  for (auto& p : perm)
    if (p < 0) p = next++;
  return planes.permute(perm);
}

std::vector<Tensor> meshgrid(TensorList tensors, const std::string& indexing) {
  BRASA_CHECK(!tensors.empty(), "meshgrid: expects a non-empty TensorList");
  BRASA_CHECK(indexing == "ij" || indexing == "xy",
              "meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", indexing);
  for (const Tensor& t : tensors)
    BRASA_CHECK(t.dim() <= 1,
                "meshgrid: Expected 0D or 1D tensor in the tensor list but got: ", t.sizes());
  std::vector<Tensor> in(tensors.begin(), tensors.end());
  const bool swap = indexing == "xy" && in.size() >= 2;
  if (swap) std::swap(in[0], in[1]);
  std::vector<int64_t> shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  std::vector<Tensor> out;
  for (size_t i = 0; i < in.size(); ++i) {
    std::vector<int64_t> view(in.size(), 1);
    view[i] = -1;
    out.push_back(in[i].reshape(view).expand(shape));
  }
  if (swap) std::swap(out[0], out[1]);  // "xy": the first two inputs vary along dims 1 and 0
  return out;
}

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  BRASA_CHECK(repeats.dim() <= 1, "repeat_interleave: repeats must be 0-dim or 1-dim tensor");
  BRASA_CHECK(repeats.scalar_type() == kLong || repeats.scalar_type() == kInt,
              "repeat_interleave: repeats must be an integer tensor, got ", repeats.scalar_type());
  Tensor r = repeats.reshape({-1}).to(Device(kCPU), kLong).contiguous();  // read on the host
  const int64_t* rp = r.data_ptr<int64_t>();
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < r.numel(); ++i) {
    BRASA_CHECK(rp[i] >= 0, "repeat_interleave: repeats can not be negative");
    idx.insert(idx.end(), static_cast<size_t>(rp[i]), i);
  }
  BRASA_CHECK(!output_size || *output_size == static_cast<int64_t>(idx.size()),
              "repeat_interleave: allocated size does not match required size (output_size ",
              *output_size, ", repeats sum to ", idx.size(), ")");
  return tensor(idx, TensorOptions().dtype(kLong).device(repeats.device()));
}

Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  Tensor x = dim ? self : self.reshape({-1});
  const int64_t d = dim ? maybe_wrap_dim(*dim, self.dim(), "repeat_interleave") : 0;
  Tensor r = repeats;
  if (r.numel() == 1 && x.size(d) != 1) r = r.reshape({1}).expand({x.size(d)});
  BRASA_CHECK(r.dim() <= 1 && r.numel() == x.size(d),
              "repeat_interleave: repeats must have the same size as input along dim (", x.size(d),
              "), got ", r.numel());
  return x.index_select(d, repeat_interleave(r, output_size));
}

Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  return repeat_interleave(self, tensor(std::vector<int64_t>{repeats}), dim, output_size);
}

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  BRASA_CHECK(self.dim() == other.dim(),
              "linalg.cross: inputs must have the same number of dimensions, got ", self.sizes(),
              " and ", other.sizes());
  auto both = broadcast_tensors({self, other});
  const int64_t d = maybe_wrap_dim(dim, both[0].dim(), "linalg.cross");
  BRASA_CHECK(both[0].size(d) == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", self.size(d), " and ", other.size(d));
  Tensor i1 = tensor(std::vector<int64_t>{1, 2, 0}), i2 = tensor(std::vector<int64_t>{2, 0, 1});
  const Tensor &a = both[0], &b = both[1];
  return a.index_select(d, i1) * b.index_select(d, i2) -
         a.index_select(d, i2) * b.index_select(d, i1);
}

Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  if (dim) return linalg_cross(self, other, *dim);
  // Without dim: the first dimension of size 3 (libtorch's old default).
  BRASA_CHECK(self.dim() == other.dim(), "cross: inputs must have the same number of dimensions");
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.size(d) == 3 && other.size(d) == 3) return linalg_cross(self, other, d);
  BRASA_ERROR("cross: no dimension of size 3 in input ", self.sizes(), " and ", other.sizes());
}

static const autograd::BackwardName kEuclideanDistBackward("EuclideanDistBackward0");

// sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0)) for every row a of x1 and b of x2.
// Its gradient, as PyTorch's: with ratio = grad / dist (0 where the
// distance is 0), x1 * rowsum(ratio) - ratio x2 and x2 * colsum(ratio) -
// ratio^T x1.
static Tensor euclidean_dist(const Tensor& x1, const Tensor& x2) {
  autograd::Recorder r(kEuclideanDistBackward, x1, x2);
  Tensor dist;
  {
    NoGradGuard no_grad;
    Tensor x2t = x2.transpose(-1, -2);
    Tensor sq = x1.pow(2).sum({-1}, true) + x2.pow(2).sum({-1}, true).transpose(-1, -2);
    dist = (sq - 2 * matmul(x1, x2t)).clamp_min(0).sqrt();
  }
  if (r)
    r.save(x1, x2, dist)
        .finish(dist, [](autograd::FormulaNode& n, const autograd::variable_list& g) {
          Tensor a = n.saved(0), b = n.saved(1), d = n.saved(2);
          Tensor ratio = where(d == 0, zeros_like(d), g[0] / d);
          autograd::variable_list out(2);
          if (n.needs(0)) out[0] = a * ratio.sum({-1}, true) - matmul(ratio, b);
          if (n.needs(1))
            out[1] = b * ratio.sum({-2}).unsqueeze(-1) - matmul(ratio.transpose(-1, -2), a);
          return out;
        });
  return dist;
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  BRASA_CHECK(x1.dim() >= 2 && x2.dim() >= 2,
              "cdist only supports at least 2D tensors, X1 got: ", x1.dim(),
              "D, X2 got: ", x2.dim(), "D");
  BRASA_CHECK(x1.size(-1) == x2.size(-1),
              "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  BRASA_CHECK(p >= 0, "cdist only supports non-negative p values");
  BRASA_CHECK(x1.is_floating_point() && x2.is_floating_point(),
              "cdist only supports floating-point dtypes, X1 got: ", x1.scalar_type(),
              ", X2 got: ", x2.scalar_type());
  // Euclidean distances between more than 25 rows on either side go by
  // matrix products, as PyTorch's default compute_mode does (the broadcast
  // difference below ran 8x libtorch's time on 128 x 128 rows of 64).
  if (p == 2 && (x1.size(-2) > 25 || x2.size(-2) > 25)) return euclidean_dist(x1, x2);
  Tensor d = x1.unsqueeze(-2) - x2.unsqueeze(-3);  // [..., P, R, M]
  if (p == 0) return d.ne(0).to(x1.scalar_type()).sum({-1});
  return d.norm(Scalar(p), {-1});
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "index_copy");
  BRASA_CHECK(source.dim() == self.dim() && index.numel() == (source.dim() ? source.size(d) : 1),
              "index_copy: source ", source.sizes(), " must be the input's shape ", self.sizes(),
              " with ", index.numel(), " slices along dim ", d);
  Tensor keep = mask_along(self.dim() ? self.size(d) : 1, d, self.dim(), index, "index_copy", false)
                    .logical_not();
  return where(keep, self, Scalar(0)).index_add(d, index.reshape({-1}).to(kLong), source);
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "index_fill");
  return where(mask_along(self.dim() ? self.size(d) : 1, d, self.dim(), index, "index_fill", true),
               value, self);
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  BRASA_CHECK(value.dim() == 0, "index_fill: only supports a 0-dimensional value tensor, but got ",
              "tensor with ", value.dim(), " dimension(s).");
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "index_fill");
  return where(mask_along(self.dim() ? self.size(d) : 1, d, self.dim(), index, "index_fill", true),
               value.to(self.scalar_type()), self);
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  BRASA_CHECK(mask.scalar_type() == kBool, "masked_scatter: expected BoolTensor for mask, got ",
              mask.scalar_type());
  BRASA_CHECK(source.scalar_type() == self.scalar_type(),
              "masked_scatter: expected self and source to have same dtypes but got ",
              self.scalar_type(), " and ", source.scalar_type());
  Tensor m = mask.expand(self.sizes()).reshape({-1});
  Tensor at = nonzero(m).reshape({-1});
  const int64_t k = at.numel();
  BRASA_CHECK(source.numel() >= k, "masked_scatter: expected source to have at least ", k,
              " elements (the number of true places in the mask), got ", source.numel());
  Tensor values = source.reshape({-1}).narrow(0, 0, k);
  return index_put(self.reshape({-1}), {std::optional<Tensor>(at)}, values).view(self.sizes());
}

}  // namespace brasa
