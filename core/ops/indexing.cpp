#include <brasa/autograd/engine.h>
#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/indexing.h>
#include <brasa/ops/shape.h>

#include <atomic>
#include <cstring>

namespace brasa {
namespace {

void check_index_dtype(const char* op, const Tensor& idx) {
  BRASA_CHECK(idx.dtype() == kLong || idx.dtype() == kInt, op,
              ": tensors used as indices must be long or int tensors (or bool masks), got ",
              idx.dtype());
}

// A vector of indices as int64 values readable on the host.
Tensor host_indices(const Tensor& index) {
  return contiguous(index.reshape({-1})).to(Device(kCPU), kLong);
}

// The device-neutral part of advanced indexing (ops/kernels/indexing.h):
// which dims are indexed, the broadcast index tensors and the result shape.
AdvancedIndex plan_advanced(const char* op, const Tensor& self,
                            const std::vector<std::optional<Tensor>>& indices) {
  BRASA_CHECK(static_cast<int64_t>(indices.size()) <= self.dim(), op,
              ": too many indices for tensor of dimension ", self.dim(), " (got ", indices.size(),
              ")");
  AdvancedIndex p;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (indices[d] && indices[d]->defined()) {
      check_index_dtype(op, *indices[d]);
      BRASA_CHECK(indices[d]->device() == self.device(), op, ": indices on ", indices[d]->device(),
                  " for a tensor on ", self.device(), " (expected the same device)");
      p.dims.push_back(static_cast<int64_t>(d));
      p.indices.push_back(*indices[d]);
    }
  }
  for (int64_t d = 0; d < self.dim(); ++d)
    if (std::find(p.dims.begin(), p.dims.end(), d) == p.dims.end()) p.rest.push_back(d);
  for (size_t i = 1; i < p.dims.size(); ++i) p.adjacent &= p.dims[i] == p.dims[i - 1] + 1;
  for (const auto& t : p.indices) p.bshape = detail::broadcast_shapes(op, p.bshape, t.sizes());
  for (auto& t : p.indices) t = contiguous(t.expand(p.bshape));
  p.result_shape = p.bshape;
  for (auto d : p.rest) p.result_shape.push_back(self.size(d));
  return p;
}

// From B-first layout to PyTorch's: adjacent index dims sit where they were.
DimVector final_perm(const AdvancedIndex& p) {
  int64_t nb = static_cast<int64_t>(p.bshape.size()), nr = static_cast<int64_t>(p.rest.size());
  DimVector perm;
  if (!p.adjacent || p.dims.empty() || p.dims[0] == 0) {
    for (int64_t i = 0; i < nb + nr; ++i) perm.push_back(i);
    return perm;
  }
  int64_t lead = p.dims[0];  // rest dims before the indexed block
  for (int64_t i = 0; i < lead; ++i) perm.push_back(nb + i);
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t i = lead; i < nr; ++i) perm.push_back(nb + i);
  return perm;
}

// Turns bool masks into long indices (one per mask dim) and checks shapes.
void expand_masks(const char* op, const Tensor& self, int64_t start_dim, const Tensor& mask,
                  std::vector<std::optional<Tensor>>& out) {
  for (int64_t k = 0; k < mask.dim(); ++k) {
    int64_t d = start_dim + k;
    BRASA_CHECK(d < self.dim() && mask.size(k) == self.size(d), op, ": the shape of the mask ",
                mask.sizes(), " at index ", k, " does not match the shape of the indexed tensor ",
                self.sizes(), " at index ", d);
  }
  Tensor nz = nonzero(mask);
  for (int64_t k = 0; k < mask.dim(); ++k) out.push_back(contiguous(nz.select(1, k)));
}

std::vector<std::optional<Tensor>> expand_all_masks(const char* op, const Tensor& self,
                                                    const std::vector<std::optional<Tensor>>& in) {
  std::vector<std::optional<Tensor>> out;
  for (const auto& i : in) {
    if (i && i->defined() && (i->dtype() == kBool || i->dtype() == kByte))
      expand_masks(op, self, static_cast<int64_t>(out.size()), *i, out);
    else
      out.push_back(i);
  }
  return out;
}

using autograd::BackwardName;
using autograd::FormulaNode;
using autograd::variable_list;
using IndexList = std::vector<std::optional<Tensor>>;
const BackwardName kIndexBackward("IndexBackward0"), kIndexPutBackward("IndexPutBackward0"),
    kGatherBackward("GatherBackward0"), kScatterBackward("ScatterBackward0"),
    kScatterValueBackward("ScatterBackward1"), kScatterAddBackward("ScatterAddBackward0"),
    kIndexSelectBackward("IndexSelectBackward0"), kIndexAddBackward("IndexAddBackward0"),
    kMaskedSelectBackward("MaskedSelectBackward0");

Tensor index_kernel(const Tensor& self, const IndexList& indices_in);

}  // namespace

static Tensor masked_select_kernel(const Tensor& self, const Tensor& mask);

namespace {

// The one index when it is a bool mask over self's leading dims (their
// sizes, at least one dim), on the CPU with self, and no trailing dim is
// empty: then self[mask] is a masked select and writing a number through it
// a masked fill, with no list of positions (nonzero) made first. The mask
// comes back with trailing dims of 1, to broadcast against self. 1 Mi floats,
// 1 thread (Intel Xeon): x.index({mask}) took 3.8 ms through nonzero and
// advanced indexing, masked_select 0.19 ms.
std::optional<Tensor> leading_cpu_mask(const Tensor& self, const IndexList& indices) {
  if (indices.size() != 1 || !indices[0] || !indices[0]->defined()) return std::nullopt;
  const Tensor& m = *indices[0];
  if (m.dtype() != kBool || !m.is_cpu() || !self.is_cpu() || m.dim() == 0 || m.dim() > self.dim())
    return std::nullopt;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d < m.dim() ? m.size(d) != self.size(d) : self.size(d) == 0) return std::nullopt;
  DimVector shape(m.sizes().begin(), m.sizes().end());
  shape.resize(static_cast<size_t>(self.dim()), 1);
  return m.reshape(shape);
}

}  // namespace

// Adds the gradient g of an indexing op into a dense gradient of its input
// (of `self_shape`) that already exists, when there is one: the leaf's .grad
// (autograd::fusable_leaf_grad), or what the running backward has gathered
// from another use of the input (Engine::pending_gradient). A table looked
// up several times (TransE's entities, skip-gram's context words) then gets
// one dense gradient instead of zeros and a sum for each lookup. `add(into)`
// adds g there. False when there is none; the caller returns its own
// gradient then.
namespace {
template <class Add>
bool add_grad_in_place(FormulaNode& n, const Tensor& g, IntArrayRef self_shape, Add&& add) {
  autograd::FusableGrad leaf = autograd::fusable_leaf_grad(n, 0, g.dtype());
  if (leaf && !leaf.transposed && !leaf.grad->is_alias_of(g)) {
    add(*leaf.grad);
    leaf.sink->accumulated_in_place();
    return true;
  }
  if (Tensor* pending = autograd::Engine::pending_gradient(n.next_edge(0), g, self_shape)) {
    add(*pending);
    return true;
  }
  return false;
}
}  // namespace

// Gradient: scattered back (summing repeated indices) into zeros.
Tensor index(const Tensor& self, const IndexList& indices) {
  autograd::Recorder r(kIndexBackward, self);
  Tensor out = index_kernel(self, indices);
  if (r) {
    DimVector in(self.sizes().begin(), self.sizes().end());
    r.finish(out, [in, indices](FormulaNode& n, const variable_list& g) {
      if (add_grad_in_place(n, g[0], in,
                            [&](Tensor& into) { index_put_(into, indices, g[0], true); }))
        return variable_list{Tensor()};
      return variable_list{
          index_put(zeros(in, g[0].options()), indices, g[0], /*accumulate=*/true)};
    });
  }
  return out;
}

namespace {
Tensor index_kernel(const Tensor& self, const std::vector<std::optional<Tensor>>& indices_in) {
  if (auto mask = leading_cpu_mask(self, indices_in)) {
    DimVector shape{-1};  // [selected places, the dims after the mask's]
    for (int64_t d = indices_in[0]->dim(); d < self.dim(); ++d) shape.push_back(self.size(d));
    return masked_select_kernel(self, *mask).view(shape);
  }
  auto indices = expand_all_masks("index", self, indices_in);
  AdvancedIndex p = plan_advanced("index", self, indices);
  if (p.dims.empty()) return clone(self);
  Tensor out = empty(p.result_shape, self.options());
  if (out.numel()) kernel<AdvancedIndexKernel>(self.device())(self, p, out);
  return contiguous(out.permute(final_perm(p)));
}

Tensor& index_put_kernel(Tensor& self, const std::vector<std::optional<Tensor>>& indices_in,
                         const Tensor& values, bool accumulate) {
  if (auto mask = leading_cpu_mask(self, indices_in);
      mask && values.dtype() == self.dtype() && values.is_cpu() && !self.is_complex()) {
    if (!accumulate && values.numel() == 1 && values.dim() <= 1) {
      NoGradGuard no_grad;  // index_put_ records the write itself
      detail::masked_fill_inplace(self, *mask, values.reshape({}));
      return self;
    }
    // A row of values per true place (index's gradient, masked_select's):
    // one pass over the mask. x.index({mask}) forward and backward, 1 Mi
    // floats: 3.4 ms through nonzero, 0.52 ms. One row may be broadcast to
    // every place, which the general path does.
    const int64_t k = indices_in[0]->dim();
    bool rows = self.is_contiguous() && values.dim() == self.dim() - k + 1 && values.size(0) != 1;
    for (int64_t d = 1; rows && d < values.dim(); ++d)
      rows = values.size(d) == self.size(k + d - 1);
    if (rows) {
      kernel<MaskedPutKernel>(self.device())(self, contiguous(mask->expand(self.sizes())),
                                             contiguous(values), accumulate);
      self.bump_version();
      return self;
    }
  }
  auto indices = expand_all_masks("index_put_", self, indices_in);
  AdvancedIndex p = plan_advanced("index_put_", self, indices);
  BRASA_CHECK(!p.dims.empty(), "index_put_: expected at least one index tensor");
  auto perm = final_perm(p);
  DimVector torch_shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) torch_shape[i] = p.result_shape[perm[i]];
  BRASA_CHECK(values.dtype() == self.dtype(), "index_put_: values dtype ", values.dtype(),
              " does not match the indexed tensor's dtype ", self.dtype());
  // A 0-dim value on the CPU is a number and goes to self's device; other
  // values must be there already.
  BRASA_CHECK(values.device() == self.device() || (values.dim() == 0 && values.is_cpu()),
              "index_put_: values on ", values.device(), " for a tensor on ", self.device(),
              " (expected the same device)");
  Tensor v;
  try {
    v = (values.device() == self.device() ? values : values.to(self.device())).expand(torch_shape);
  } catch (const Error&) {
    BRASA_ERROR("index_put_: shape mismatch: value tensor of shape ", values.sizes(),
                " cannot be broadcast to indexing result of shape ", IntArrayRef(torch_shape));
  }
  // Back to B-first order: invert the permutation.
  DimVector inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  v = contiguous(v.permute(inv));
  if (v.numel()) kernel<AdvancedIndexPutKernel>(self.device())(self, p, v, accumulate);
  self.bump_version();
  return self;
}

}  // namespace

Tensor index_put(const Tensor& self, const IndexList& indices, const Tensor& values,
                 bool accumulate) {
  autograd::Recorder r(kIndexPutBackward, self, values);
  Tensor out = clone(self);
  index_put_kernel(out, indices, values, accumulate);
  if (r)
    r.finish(out, [indices, accumulate](FormulaNode& n, const variable_list& g) {
      variable_list d(2);
      if (n.needs(0))
        d[0] = accumulate ? g[0] : index_put(g[0], indices, zeros({}, g[0].options()), false);
      if (n.needs(1)) d[1] = index(g[0], indices);  // the engine sums it to the values' shape
      return d;
    });
  return out;
}

Tensor& index_put_(Tensor& self, const IndexList& indices, const Tensor& values, bool accumulate) {
  return autograd::inplace(
      "index_put_", self, [&] { index_put_kernel(self, indices, values, accumulate); },
      [&](const Tensor& old) { return index_put(old, indices, values, accumulate); }, values);
}

namespace detail {

// Basic indexing (views) for ints, slices, None, Ellipsis and bools; tensor
// entries are collected for a following advanced-indexing step.
static Tensor apply_basic(const Tensor& self, ArrayRef<TensorIndex> indices,
                          std::vector<std::optional<Tensor>>& tensors) {
  int64_t consumed = 0;
  bool ellipsis = false;
  for (const auto& i : indices) {
    if (i.is_integer() || i.is_slice())
      ++consumed;
    else if (i.is_tensor())
      consumed += (i.tensor().dtype() == kBool || i.tensor().dtype() == kByte)
                      ? std::max<int64_t>(i.tensor().dim(), 0)
                      : 1;
    else if (i.is_ellipsis()) {
      BRASA_CHECK(!ellipsis, "index: an index can only have a single ellipsis ('...')");
      ellipsis = true;
    }
  }
  BRASA_CHECK(consumed <= self.dim(), "index: too many indices for tensor of dimension ",
              self.dim(), " (got ", consumed, ")");
  Tensor r = self;
  int64_t dim = 0;
  for (const auto& i : indices) {
    switch (i.type()) {
      case indexing::TensorIndexType::Integer: {
        int64_t sz = r.size(dim);
        BRASA_CHECK(i.integer() >= -sz && i.integer() < sz, "index: index ", i.integer(),
                    " is out of bounds for dimension ", dim, " with size ", sz);
        r = select(r, dim, i.integer());
        break;
      }
      case indexing::TensorIndexType::Slice: {
        const auto& s = i.slice();
        r = slice(r, dim, s.start, s.stop, s.step.value_or(1));
        tensors.push_back(std::nullopt);
        ++dim;
        break;
      }
      case indexing::TensorIndexType::None:
        r = unsqueeze(r, dim);
        tensors.push_back(std::nullopt);
        ++dim;
        break;
      case indexing::TensorIndexType::Boolean:
        r = unsqueeze(r, dim);
        if (!i.boolean()) r = slice(r, dim, 0, 0);
        tensors.push_back(std::nullopt);
        ++dim;
        break;
      case indexing::TensorIndexType::Ellipsis: {
        int64_t skip = self.dim() - consumed;
        for (int64_t k = 0; k < skip; ++k) tensors.push_back(std::nullopt);
        dim += skip;
        break;
      }
      case indexing::TensorIndexType::Tensor: {
        const Tensor& t = i.tensor();
        bool mask = t.dtype() == kBool || t.dtype() == kByte;
        if (mask && t.dim() == 0) {
          // A 0-dim mask works like a bool: adds a dim of size 1 or 0.
          r = unsqueeze(r, dim);
          if (!t.item<bool>()) r = slice(r, dim, 0, 0);
          tensors.push_back(std::nullopt);
          ++dim;
          break;
        }
        tensors.push_back(t);
        dim += mask ? t.dim() : 1;
        if (mask)
          for (int64_t k = 1; k < t.dim(); ++k)
            tensors.push_back(std::nullopt);  // placeholders, fixed below
        break;
      }
    }
  }
  return r;
}

// Masks spanning k dims were recorded once followed by k-1 placeholders; index()
// expands a mask itself, so drop the placeholders.
static std::vector<std::optional<Tensor>> drop_mask_placeholders(
    const std::vector<std::optional<Tensor>>& in) {
  std::vector<std::optional<Tensor>> out;
  for (size_t i = 0; i < in.size(); ++i) {
    out.push_back(in[i]);
    if (in[i] && (in[i]->dtype() == kBool || in[i]->dtype() == kByte))
      i += std::max<int64_t>(in[i]->dim() - 1, 0);
  }
  return out;
}

Tensor index_with(const Tensor& self, ArrayRef<TensorIndex> indices) {
  std::vector<std::optional<Tensor>> tensors;
  Tensor r = apply_basic(self, indices, tensors);
  bool any = false;
  for (const auto& t : tensors) any |= t.has_value();
  if (!any) return r;
  return index(r, drop_mask_placeholders(tensors));
}

Tensor& index_put_with(Tensor& self, ArrayRef<TensorIndex> indices, const Tensor& values) {
  std::vector<std::optional<Tensor>> tensors;
  Tensor r = apply_basic(self, indices, tensors);
  bool any = false;
  for (const auto& t : tensors) any |= t.has_value();
  if (!any) {
    r.copy_(values.dtype() == r.dtype() ? values : values.to(r.dtype()));
  } else {
    index_put_(r, drop_mask_placeholders(tensors),
               values.dtype() == r.dtype() ? values : values.to(r.dtype()));
  }
  return self;
}

static Tensor& scatter_kernel(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                              bool add);
Tensor& scatter_inplace(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        bool add) {
  return autograd::inplace(
      add ? "scatter_add_" : "scatter_", self, [&] { scatter_kernel(self, dim, index, src, add); },
      [&](const Tensor& old) {
        return add ? scatter_add(old, dim, index, src) : scatter(old, dim, index, src);
      },
      src);
}
static Tensor& scatter_kernel(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                              bool add) {
  const char* op = add ? "scatter_add_" : "scatter_";
  int64_t d = maybe_wrap_dim(dim, self.dim(), op);
  BRASA_CHECK(index.dtype() == kLong, op, ": expected dtype int64 for index, got ", index.dtype());
  BRASA_CHECK(index.device() == self.device(), op, ": index on ", index.device(),
              " for a tensor on ", self.device(), " (expected the same device)");
  BRASA_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1), op,
              ": index tensor must have the same number of dimensions as self tensor (", self.dim(),
              " vs ", index.dim(), ")");
  BRASA_CHECK(src.dim() == 0 || src.dim() == index.dim(), op,
              ": index tensor must have the same number of dimensions as src tensor (", src.dim(),
              " vs ", index.dim(), ")");
  for (int64_t k = 0; k < index.dim(); ++k) {
    BRASA_CHECK(k == d || index.size(k) <= self.size(k), op, ": expected index ", index.sizes(),
                " to be smaller than self ", self.sizes(), " apart from dimension ", d);
    BRASA_CHECK(src.dim() == 0 || index.size(k) <= src.size(k), op, ": expected index ",
                index.sizes(), " to be smaller than src ", src.sizes());
  }
  Tensor s = src.to(self.device(), self.dtype());
  if (index.numel() == 0) return self;
  kernel<ScatterKernel>(self.device())(self, d, index, s, add);
  self.bump_version();
  return self;
}

static Tensor& index_add_kernel(Tensor& self, int64_t dim, const Tensor& index,
                                const Tensor& source, const Scalar& alpha);
Tensor& index_add_inplace(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                          const Scalar& alpha) {
  return autograd::inplace(
      "index_add_", self, [&] { index_add_kernel(self, dim, index, source, alpha); },
      [&](const Tensor& old) { return index_add(old, dim, index, source, alpha); }, source);
}
// index_add_ on contiguous float/double CPU tensors of equal sizes but
// along d, as [outer, size, inner] row updates in one loop (an embedding's
// backward adds thousands of rows; one op per row cost a microsecond each).
// False when the tensors are not of that form.
template <class T>
void add_rows(T* self, const T* src, const int64_t* idx, int64_t n, int64_t outer, int64_t size,
              int64_t inner, T alpha) {
  for (int64_t p = 0; p < outer; ++p)
    for (int64_t i = 0; i < n; ++i) {
      T* dst = self + (p * size + idx[i]) * inner;
      const T* from = src + (p * n + i) * inner;
      for (int64_t q = 0; q < inner; ++q) dst[q] += alpha * from[q];
    }
}
// A strided source (an embedding's gradient from sum() is an expanded one)
// is copied contiguous first: one pass, against the general loop's many.
static bool index_add_rows(Tensor& self, int64_t d, const Tensor& idx, const Tensor& source,
                           const Scalar& alpha) {
  if (!self.is_cpu() || !source.is_cpu() || self.dim() == 0 || source.dim() != self.dim() ||
      !self.is_contiguous() || source.dtype() != self.dtype() ||
      (self.dtype() != kFloat && self.dtype() != kDouble))
    return false;
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d && source.size(k) != self.size(k)) return false;
  const Tensor s = source.contiguous();
  const int64_t n = idx.numel(), size = self.size(d);
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    rows[i] = check_index("index_add_", idx.data_ptr<int64_t>()[i], size, d);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= self.size(k);
  for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.size(k);
  if (self.dtype() == kFloat)
    add_rows(self.data_ptr<float>(), s.data_ptr<float>(), rows.data(), n, outer, size, inner,
             static_cast<float>(alpha.toDouble()));
  else
    add_rows(self.data_ptr<double>(), s.data_ptr<double>(), rows.data(), n, outer, size, inner,
             alpha.toDouble());
  return true;
}

static Tensor& index_add_kernel(Tensor& self, int64_t dim, const Tensor& index,
                                const Tensor& source, const Scalar& alpha) {
  int64_t d = maybe_wrap_dim(dim, self.dim(), "index_add_");
  check_index_dtype("index_add_", index);
  BRASA_CHECK(index.dim() <= 1, "index_add_: index is supposed to be a vector, got ", index.dim(),
              " dims");
  Tensor idx = host_indices(index);
  int64_t n = idx.numel();
  BRASA_CHECK(source.dim() == self.dim() || (self.dim() <= 1 && source.dim() <= 1),
              "index_add_: source ", source.sizes(), " and self ", self.sizes(),
              " must have the same number of dimensions");
  BRASA_CHECK((source.dim() == 0 ? 1 : source.size(d)) == n, "index_add_: number of indices (", n,
              ") should be equal to source.size(dim) (", (source.dim() == 0 ? 1 : source.size(d)),
              ")");
  Tensor s = source.dtype() == self.dtype() ? source : source.to(self.dtype());
  if (index_add_rows(self, d, idx, s, alpha)) {
    self.bump_version();
    return self;
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t ix =
        wrap_index("index_add_", idx.data_ptr<int64_t>()[i], self.dim() == 0 ? 1 : self.size(d), d);
    Tensor dst = self.dim() == 0 ? self : select(self, d, ix);
    Tensor srow = s.dim() == 0 ? s : select(s, d, i);
    detail::add_inplace(dst, srow, alpha);
  }
  self.bump_version();
  return self;
}

}  // namespace detail

static Tensor gather_kernel(const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  autograd::Recorder r(kGatherBackward, self);
  Tensor out = gather_kernel(self, dim, index);
  if (r) {
    DimVector in(self.sizes().begin(), self.sizes().end());
    r.save(index).finish(out, [in, dim](FormulaNode& n, const variable_list& g) {
      IndicesInRangeGuard checked_by_the_forward;
      Tensor grad = zeros(in, g[0].options());
      if (autograd::GradMode::is_enabled())  // a differentiable gradient (double backward)
        return variable_list{scatter_add(grad, dim, n.saved(0), g[0])};
      // Straight into the zeros: scatter_add would first copy them (a third of
      // cross_entropy's backward on [512, 1000] logits).
      detail::scatter_inplace(grad, dim, n.saved(0), g[0], true);
      return variable_list{grad};
    });
  }
  return out;
}
static Tensor gather_kernel(const Tensor& self, int64_t dim, const Tensor& index) {
  int64_t d = maybe_wrap_dim(dim, self.dim(), "gather");
  BRASA_CHECK(index.dtype() == kLong, "gather: expected dtype int64 for index, got ",
              index.dtype());
  BRASA_CHECK(index.device() == self.device(), "gather: index on ", index.device(),
              " for a tensor on ", self.device(), " (expected the same device)");
  BRASA_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1),
              "gather: index tensor must have the same number of dimensions as input tensor (",
              self.dim(), " vs ", index.dim(), ")");
  for (int64_t k = 0; k < index.dim(); ++k)
    BRASA_CHECK(k == d || index.size(k) <= self.size(k), "gather: size of index ", index.sizes(),
                " does not match input ", self.sizes(), " at dimension ", k,
                " (index must not be larger except at dim ", d, ")");
  Tensor out = empty(index.sizes(), self.options());
  if (index.numel() == 0) return out;
  kernel<GatherKernel>(self.device())(out, self, d, index);
  return out;
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  autograd::Recorder r(kScatterBackward, self, src);
  Tensor out = clone(self);
  detail::scatter_inplace(out, dim, index, src, false);
  if (r)
    r.save(index).finish(out, [dim](FormulaNode& n, const variable_list& g) {
      variable_list d(2);
      Tensor idx = n.saved(0);
      if (n.needs(0)) d[0] = scatter(g[0], dim, idx, Scalar(0));
      if (n.needs(1)) d[1] = gather(g[0], dim, idx);
      return d;
    });
  return out;
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  autograd::Recorder r(kScatterValueBackward, self);
  Tensor out = clone(self);
  detail::scatter_inplace(out, dim, index, detail::scalar_tensor_of(value, self.dtype()), false);
  if (r)
    r.save(index).finish(out, [dim](FormulaNode& n, const variable_list& g) {
      return variable_list{scatter(g[0], dim, n.saved(0), Scalar(0))};
    });
  return out;
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  autograd::Recorder r(kScatterAddBackward, self, src);
  Tensor out = clone(self);
  detail::scatter_inplace(out, dim, index, src, true);
  if (r)
    r.save(index).finish(out, [dim](FormulaNode& n, const variable_list& g) {
      variable_list d(2);
      if (n.needs(0)) d[0] = g[0];
      if (n.needs(1)) d[1] = gather(g[0], dim, n.saved(0));
      return d;
    });
  return out;
}

// wraps: negative indices count from the end (take), else they are an
// error (index_select, as PyTorch).
static Tensor index_select_kernel(const Tensor& self, int64_t dim, const Tensor& index, bool wraps);
static Tensor index_select_impl(const Tensor& self, int64_t dim, const Tensor& index, bool wraps) {
  autograd::Recorder r(kIndexSelectBackward, self);
  Tensor out = index_select_kernel(self, dim, index, wraps);
  if (r) {
    DimVector in(self.sizes().begin(), self.sizes().end());
    r.save(index).finish(out, [in, dim](FormulaNode& n, const variable_list& g) {
      if (in.empty()) return variable_list{g[0].reshape({})};
      if (add_grad_in_place(n, g[0], in, [&](Tensor& into) {
            detail::index_add_inplace(into, dim, n.saved(0), g[0], 1);
          }))
        return variable_list{Tensor()};
      // Added into fresh zeros in place (no copy of the zeros; with
      // create_graph the in-place op records its own formula).
      Tensor z = zeros(in, g[0].options());
      return variable_list{detail::index_add_inplace(z, dim, n.saved(0), g[0], 1)};
    });
  }
  return out;
}
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  return index_select_impl(self, dim, index, false);
}
static Tensor index_select_kernel(const Tensor& self, int64_t dim, const Tensor& index,
                                  bool wraps) {
  int64_t d = maybe_wrap_dim(dim, self.dim(), "index_select");
  check_index_dtype("index_select", index);
  BRASA_CHECK(index.dim() <= 1, "index_select: index is supposed to be a vector, got ", index.dim(),
              " dims");
  Tensor idx = host_indices(index);
  int64_t n = idx.numel();
  const int64_t* hi = idx.data_ptr<int64_t>();
  DimVector shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() == 0) {
    BRASA_CHECK(n == 1, "index_select: index for a 0-dim tensor must hold exactly one element");
    wraps ? wrap_index("index_select", hi[0], 1, 0) : check_index("index_select", hi[0], 1, 0);
    return clone(self);
  }
  int64_t size = self.size(d);
  shape[d] = n;
  Tensor out = empty(shape, self.options());
  Tensor wrapped = empty({n}, TensorOptions().dtype(kLong));
  int64_t* ix = wrapped.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    ix[i] = wraps ? wrap_index("index_select", hi[i], size, d)
                  : check_index("index_select", hi[i], size, d);
  if (out.numel())
    kernel<IndexSelectKernel>(self.device())(out, self, d, wrapped.to(self.device()));
  return out;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha) {
  autograd::Recorder r(kIndexAddBackward, self, source);
  Tensor out = clone(self);
  detail::index_add_inplace(out, dim, index, source, alpha);
  if (r) {
    const double al = alpha.toDouble();
    const bool scalar_source = source.dim() == 0;
    r.save(index).finish(out, [dim, al, scalar_source](FormulaNode& n, const variable_list& g) {
      variable_list d(2);
      if (n.needs(0)) d[0] = g[0];
      if (n.needs(1)) {
        Tensor s = g[0].dim() == 0 ? g[0] : index_select(g[0], dim, n.saved(0));
        if (scalar_source) s = s.reshape({});
        d[1] = al == 1.0 ? s : s * al;
      }
      return d;
    });
  }
  return out;
}

static Tensor masked_select_kernel(const Tensor& self, const Tensor& mask);
Tensor masked_select(const Tensor& self, const Tensor& mask) {
  autograd::Recorder r(kMaskedSelectBackward, self);
  Tensor out = masked_select_kernel(self, mask);
  if (r) {
    auto shape = detail::broadcast_shapes("masked_select", self.sizes(), mask.sizes());
    r.save(mask).finish(out, [shape](FormulaNode& n, const variable_list& g) {
      Tensor m = n.saved(0).expand(shape);
      return variable_list{index_put(zeros(shape, g[0].options()), IndexList{m}, g[0])};
    });
  }
  return out;
}
static Tensor masked_select_kernel(const Tensor& self, const Tensor& mask) {
  BRASA_CHECK(mask.dtype() == kBool, "masked_select: expected BoolTensor for mask, got ",
              mask.dtype());
  BRASA_CHECK(mask.device() == self.device(), "masked_select: mask on ", mask.device(),
              " for a tensor on ", self.device(), " (expected the same device)");
  auto shape = detail::broadcast_shapes("masked_select", self.sizes(), mask.sizes());
  Tensor s = contiguous(self.expand(shape)), m = contiguous(mask.expand(shape));
  return kernel<MaskedSelectKernel>(s.device())(s, m);
}

Tensor nonzero(const Tensor& self) {
  Tensor c = contiguous(self);
  return kernel<NonzeroKernel>(c.device())(c);
}

std::vector<Tensor> nonzero_numpy(const Tensor& self) {
  Tensor nz = nonzero(self);
  std::vector<Tensor> out;
  for (int64_t d = 0; d < self.dim(); ++d) out.push_back(contiguous(nz.select(1, d)));
  return out;
}

// Negative indices count from the end of the flattened input, as PyTorch's.
Tensor take(const Tensor& self, const Tensor& index) {
  return index_select_impl(contiguous(self).reshape({-1}), 0, contiguous(index).reshape({-1}), true)
      .view(index.sizes());
}

}  // namespace brasa
