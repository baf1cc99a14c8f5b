#include <brasa/autograd/record.h>
#include <brasa/autograd/view_grad.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/copy.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/util/parallel.h>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace brasa {

Tensor detail::make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                         ScalarType dtype) {
  auto impl = make_intrusive<TensorImpl>(base.storage(), dtype, sizes, strides, offset);
  // Views made in grad mode remember their root base, so that in-place
  // writes through them can update the base's history (CopySlices).
  if (is_grad_enabled()) {
    TensorImpl* root = base.unsafeGetTensorImpl()->view_base();
    impl->set_view_base(root ? intrusive_ptr<TensorImpl>(root) : base.getIntrusivePtr());
  }
  return Tensor(std::move(impl));
}

namespace {

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return detail::make_view(base, sizes, strides, offset, base.dtype());
}

// Fills in a -1 entry of `size` from numel; checks the product.
DimVector infer_size(const char* op, IntArrayRef size, int64_t numel) {
  DimVector out(size.begin(), size.end());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      BRASA_CHECK(infer < 0, op, ": only one dimension can be inferred in shape ", size);
      infer = static_cast<int64_t>(i);
    } else {
      BRASA_CHECK(out[i] >= 0, op, ": invalid shape dimension ", out[i], " in ", size);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    BRASA_CHECK(known != 0 && numel % known == 0, op, ": shape ", size,
                " is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    BRASA_CHECK(known == numel, op, ": shape ", size, " is invalid for input of size ", numel);
  }
  return out;
}

// Strides for viewing (sizes, strides) as `shape` without copying, if possible
// (PyTorch's computeStride): groups of old dims that are contiguous among
// themselves can be split or merged freely.
std::optional<DimVector> view_strides(IntArrayRef old_size, IntArrayRef old_stride,
                                      IntArrayRef shape) {
  DimVector out(shape.size());
  if (old_size.empty()) {
    std::fill(out.begin(), out.end(), 1);
    return out;
  }
  int64_t numel = compute_numel(old_size);
  if (numel == 0) {
    if (old_size == shape) return DimVector(old_stride.begin(), old_stride.end());
    return contiguous_strides(shape);
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_stride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_size.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_size[d];
    if (d == 0 || (old_size[d - 1] != 1 && old_stride[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_stride[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

using autograd::BackwardName;
using autograd::FormulaNode;
using autograd::variable_list;

// Records `out` (already computed, a view or a fresh tensor) as a function
// of `in` whose gradient is grad_of(g).
template <class F>
Tensor recorded(const BackwardName& name, const Tensor& in, Tensor out, F grad_of) {
  if (!autograd::needs_grad(in)) return out;
  autograd::Recorder r(name, in);
  r.finish(out, [grad_of](FormulaNode&, const variable_list& g) {
    return variable_list{grad_of(g[0])};
  });
  return out;
}

// Records a view whose gradient scatters into zeros through the same view.
Tensor viewed(const BackwardName& name, const Tensor& in, Tensor out, autograd::ViewFn fn) {
  if (autograd::needs_grad(in)) autograd::record_view(name, in, out, std::move(fn));
  return out;
}

DimVector dims_of(IntArrayRef s) { return DimVector(s.begin(), s.end()); }

const BackwardName kViewBackward("ViewBackward0"), kPermuteBackward("PermuteBackward0"),
    kTransposeBackward("TransposeBackward0"), kTBackward("TBackward0"),
    kSqueezeBackward("SqueezeBackward0"), kUnsqueezeBackward("UnsqueezeBackward0"),
    kExpandBackward("ExpandBackward0"), kSliceBackward("SliceBackward0"),
    kSelectBackward("SelectBackward0"), kUnfoldBackward("UnfoldBackward0"),
    kDiagonalBackward("DiagonalBackward0"), kCatBackward("CatBackward0"),
    kFlipBackward("FlipBackward0"), kRepeatBackward("RepeatBackward0"),
    kDiagEmbedBackward("DiagBackward0"), kTrilBackward("TrilBackward0"),
    kTriuBackward("TriuBackward0");

}  // namespace

int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);
  BRASA_CHECK(dim >= -n && dim < n, op, ": dimension out of range (expected to be in range of [",
              -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

Tensor view(const Tensor& t, IntArrayRef size) {
  auto shape = infer_size("view", size, t.numel());
  auto st = view_strides(t.sizes(), t.strides(), shape);
  BRASA_CHECK(st.has_value(), "view: size ", t.sizes(), " with strides ", t.strides(),
              " is not compatible with the requested shape ", IntArrayRef(shape),
              " (at least one dimension spans across two contiguous subspaces). Use .reshape(...) "
              "instead.");
  DimVector in = dims_of(t.sizes());
  return recorded(kViewBackward, t, make_view(t, shape, *st, t.storage_offset()),
                  [in](const Tensor& g) { return reshape(g, in); });
}

Tensor reshape(const Tensor& t, IntArrayRef size) {
  auto shape = infer_size("reshape", size, t.numel());
  if (view_strides(t.sizes(), t.strides(), shape)) return view(t, shape);
  return view(clone(t), shape);
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  if (t.dim() == 0) return reshape(t, {1});
  int64_t s = maybe_wrap_dim(start_dim, t.dim(), "flatten");
  int64_t e = maybe_wrap_dim(end_dim, t.dim(), "flatten");
  BRASA_CHECK(s <= e, "flatten: start_dim (", start_dim, ") cannot come after end_dim (", end_dim,
              ")");
  DimVector shape;
  for (int64_t d = 0; d < s; ++d) shape.push_back(t.size(d));
  int64_t m = 1;
  for (int64_t d = s; d <= e; ++d) m *= t.size(d);
  shape.push_back(m);
  for (int64_t d = e + 1; d < t.dim(); ++d) shape.push_back(t.size(d));
  return reshape(t, shape);
}

Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes) {
  int64_t d = maybe_wrap_dim(dim, t.dim(), "unflatten");
  auto inner = infer_size("unflatten", sizes, t.size(d));
  DimVector shape;
  for (int64_t i = 0; i < d; ++i) shape.push_back(t.size(i));
  for (auto s : inner) shape.push_back(s);
  for (int64_t i = d + 1; i < t.dim(); ++i) shape.push_back(t.size(i));
  return view(t, shape);
}

Tensor permute(const Tensor& t, IntArrayRef dims) {
  BRASA_CHECK(static_cast<int64_t>(dims.size()) == t.dim(),
              "permute: number of dims don't match (input has ", t.dim(), " dims, permutation ",
              dims, " has ", dims.size(), ")");
  DimVector size(dims.size()), stride(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = maybe_wrap_dim(dims[i], t.dim(), "permute");
    BRASA_CHECK(!seen[d], "permute: repeated dim ", dims[i], " in ", dims);
    seen[d] = true;
    size[i] = t.size(d);
    stride[i] = t.stride(d);
  }
  DimVector inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    inverse[maybe_wrap_dim(dims[i], t.dim(), "permute")] = static_cast<int64_t>(i);
  return recorded(kPermuteBackward, t, make_view(t, size, stride, t.storage_offset()),
                  [inverse](const Tensor& g) { return permute(g, inverse); });
}

Tensor movedim(const Tensor& t, int64_t src, int64_t dst) {
  int64_t s = maybe_wrap_dim(src, t.dim(), "movedim"), d = maybe_wrap_dim(dst, t.dim(), "movedim");
  DimVector order;
  for (int64_t i = 0; i < t.dim(); ++i)
    if (i != s) order.push_back(i);
  order.insert(d, s);
  return permute(t, order);
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  if (t.dim() == 0) return t;
  int64_t a = maybe_wrap_dim(d0, t.dim(), "transpose"),
          b = maybe_wrap_dim(d1, t.dim(), "transpose");
  DimVector size(t.sizes().begin(), t.sizes().end()),
      stride(t.strides().begin(), t.strides().end());
  std::swap(size[a], size[b]);
  std::swap(stride[a], stride[b]);
  return recorded(kTransposeBackward, t, make_view(t, size, stride, t.storage_offset()),
                  [a, b](const Tensor& g) { return transpose(g, a, b); });
}

Tensor t(const Tensor& x) {
  BRASA_CHECK(x.dim() <= 2, "t: expects a tensor with <= 2 dimensions, but self is ", x.dim(), "D");
  if (x.dim() < 2) return x;
  // Its own node, as in PyTorch: always a 2-D transpose, marked so that a
  // matrix product's backward can see through it (autograd::fusable_leaf_grad).
  Tensor out = make_view(x, {x.size(1), x.size(0)}, {x.stride(1), x.stride(0)}, x.storage_offset());
  if (!autograd::needs_grad(x)) return out;
  autograd::Recorder r(kTBackward, x);
  r.node().set_transposes_gradient_2d();
  r.finish(out, [](FormulaNode&, const variable_list& g) { return variable_list{t(g[0])}; });
  return out;
}

Tensor squeeze(const Tensor& t) {
  DimVector size, stride;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) size.push_back(t.size(d)), stride.push_back(t.stride(d));
  DimVector in = dims_of(t.sizes());
  return recorded(kSqueezeBackward, t, make_view(t, size, stride, t.storage_offset()),
                  [in](const Tensor& g) { return reshape(g, in); });
}

Tensor squeeze(const Tensor& t, int64_t dim) {
  int64_t d = maybe_wrap_dim(dim, t.dim(), "squeeze");
  DimVector in = dims_of(t.sizes());
  auto back = [in](const Tensor& g) { return reshape(g, in); };
  if (t.dim() == 0 || t.size(d) != 1)
    return recorded(kSqueezeBackward, t, make_view(t, t.sizes(), t.strides(), t.storage_offset()),
                    back);
  DimVector size(t.sizes().begin(), t.sizes().end()),
      stride(t.strides().begin(), t.strides().end());
  size.erase(d);
  stride.erase(d);
  return recorded(kSqueezeBackward, t, make_view(t, size, stride, t.storage_offset()), back);
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  int64_t d = maybe_wrap_dim(dim, t.dim() + 1, "unsqueeze");
  DimVector size(t.sizes().begin(), t.sizes().end()),
      stride(t.strides().begin(), t.strides().end());
  int64_t st = d < t.dim() ? t.size(d) * t.stride(d) : 1;
  size.insert(d, 1);
  stride.insert(d, st);
  DimVector in = dims_of(t.sizes());
  return recorded(kUnsqueezeBackward, t, make_view(t, size, stride, t.storage_offset()),
                  [in](const Tensor& g) { return reshape(g, in); });
}

Tensor expand(const Tensor& t, IntArrayRef size) {
  BRASA_CHECK(static_cast<int64_t>(size.size()) >= t.dim(),
              "expand: the number of sizes provided (", size.size(),
              ") must be greater or equal to the number of dimensions in the tensor (", t.dim(),
              ")");
  int64_t n = static_cast<int64_t>(size.size()), off = n - t.dim();
  DimVector osize(n), ostride(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t d = i - off;
    int64_t cur = d >= 0 ? t.size(d) : 1;
    int64_t want = size[i];
    if (want == -1) {
      BRASA_CHECK(d >= 0, "expand: -1 is not allowed in a leading, non-existing dimension (", i,
                  ")");
      want = cur;
    }
    BRASA_CHECK(cur == want || cur == 1, "expand: the expanded size of the tensor (", want,
                ") must match the existing size (", cur, ") at non-singleton dimension ", i,
                ".  Target sizes: ", size, ".  Tensor sizes: ", t.sizes());
    osize[i] = want;
    ostride[i] = (d >= 0 && cur == want) ? t.stride(d) : 0;
  }
  DimVector in = dims_of(t.sizes());
  return recorded(kExpandBackward, t, make_view(t, osize, ostride, t.storage_offset()),
                  [in](const Tensor& g) { return autograd::sum_to(g, in); });
}

Tensor broadcast_to(const Tensor& t, IntArrayRef size) { return expand(t, size); }

std::vector<Tensor> broadcast_tensors(TensorList tensors) {
  DimVector shape;
  for (const auto& t : tensors)
    shape = detail::broadcast_shapes("broadcast_tensors", shape, t.sizes());
  std::vector<Tensor> out;
  for (const auto& t : tensors) out.push_back(expand(t, shape));
  return out;
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  BRASA_CHECK(t.dim() > 0, "narrow: cannot be applied to a 0-dim tensor");
  int64_t d = maybe_wrap_dim(dim, t.dim(), "narrow");
  int64_t sz = t.size(d);
  BRASA_CHECK(start >= -sz && start <= sz, "narrow: start (", start,
              ") out of range for dimension ", d, " of size ", sz);
  if (start < 0) start += sz;
  BRASA_CHECK(length >= 0 && start + length <= sz, "narrow: start (", start, ") + length (", length,
              ") exceeds dimension size (", sz, ")");
  return slice(t, d, start, start + length);
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  BRASA_CHECK(t.dim() > 0, "slice: cannot be applied to a 0-dim tensor");
  BRASA_CHECK(step > 0, "slice: step must be positive, got ", step);
  int64_t d = maybe_wrap_dim(dim, t.dim(), "slice");
  int64_t sz = t.size(d);
  int64_t s = start.value_or(0), e = end.value_or(sz);
  if (s < 0) s += sz;
  if (e < 0) e += sz;
  s = std::clamp<int64_t>(s, 0, sz);
  e = std::clamp<int64_t>(e, s, sz);
  DimVector size(t.sizes().begin(), t.sizes().end()),
      stride(t.strides().begin(), t.strides().end());
  size[d] = (e - s + step - 1) / step;
  stride[d] = t.stride(d) * step;
  return viewed(kSliceBackward, t, make_view(t, size, stride, t.storage_offset() + s * t.stride(d)),
                [d, s, e, step](const Tensor& x) { return slice(x, d, s, e, step); });
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  BRASA_CHECK(t.dim() > 0, "select: cannot be applied to a 0-dim tensor");
  int64_t d = maybe_wrap_dim(dim, t.dim(), "select");
  int64_t sz = t.size(d);
  BRASA_CHECK(index >= -sz && index < sz, "select: index ", index,
              " out of range for tensor of size ", t.sizes(), " at dimension ", d);
  if (index < 0) index += sz;
  DimVector size(t.sizes().begin(), t.sizes().end()),
      stride(t.strides().begin(), t.strides().end());
  size.erase(d);
  stride.erase(d);
  return viewed(kSelectBackward, t,
                make_view(t, size, stride, t.storage_offset() + index * t.stride(d)),
                [d, index](const Tensor& x) { return select(x, d, index); });
}

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step) {
  int64_t d = maybe_wrap_dim(dim, t.dim(), "unfold");
  int64_t sz = t.dim() == 0 ? 1 : t.size(d);
  BRASA_CHECK(size >= 0 && size <= sz, "unfold: maximum size for tensor at dimension ", d, " is ",
              sz, " but size is ", size);
  BRASA_CHECK(step > 0, "unfold: step is ", step, " but must be > 0");
  DimVector osize(t.sizes().begin(), t.sizes().end()),
      ostride(t.strides().begin(), t.strides().end());
  auto fn = [d, size, step](const Tensor& x) { return unfold(x, d, size, step); };
  if (t.dim() == 0) {
    osize = {size};
    ostride = {1};
    return viewed(kUnfoldBackward, t, make_view(t, osize, ostride, t.storage_offset()), fn);
  }
  int64_t st = t.stride(d);
  osize[d] = (sz - size) / step + 1;
  ostride[d] = st * step;
  osize.push_back(size);
  ostride.push_back(st);
  return viewed(kUnfoldBackward, t, make_view(t, osize, ostride, t.storage_offset()), fn);
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t a = maybe_wrap_dim(dim1, t.dim(), "diagonal"),
          b = maybe_wrap_dim(dim2, t.dim(), "diagonal");
  BRASA_CHECK(a != b, "diagonal: dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t off = t.storage_offset(), len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(t.size(a), t.size(b) - offset), 0);
    off += offset * t.stride(b);
  } else {
    len = std::max<int64_t>(std::min(t.size(a) + offset, t.size(b)), 0);
    off -= offset * t.stride(a);
  }
  if (len == 0) off = t.storage_offset();
  DimVector size, stride;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != a && d != b) size.push_back(t.size(d)), stride.push_back(t.stride(d));
  size.push_back(len);
  stride.push_back(t.stride(a) + t.stride(b));
  return viewed(kDiagonalBackward, t, make_view(t, size, stride, off),
                [offset, a, b](const Tensor& x) { return diagonal(x, offset, a, b); });
}

Tensor as_strided(const Tensor& t, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset) {
  BRASA_CHECK(size.size() == stride.size(), "as_strided: mismatch in length of strides and shape (",
              size, " vs ", stride, ")");
  int64_t off = storage_offset.value_or(t.storage_offset());
  BRASA_CHECK(off >= 0, "as_strided: negative storage offset ", off);
  int64_t extent = 0;
  bool empty_view = false;
  for (size_t i = 0; i < size.size(); ++i) {
    BRASA_CHECK(size[i] >= 0 && stride[i] >= 0, "as_strided: negative size or stride in ", size,
                " / ", stride);
    if (size[i] == 0) empty_view = true;
    extent += (size[i] - 1) * stride[i];
  }
  if (!empty_view) {
    int64_t needed = (off + extent + 1) * t.element_size();
    BRASA_CHECK(static_cast<size_t>(needed) <= t.storage()->nbytes(),
                "as_strided: setStorage: sizes ", size, ", strides ", stride,
                " and storage offset ", off, " require ", needed,
                " bytes but the storage holds only ", t.storage()->nbytes());
  }
  Tensor out = make_view(t, size, stride, off);
  if (autograd::needs_grad(t)) {
    // The backward maps positions through t's own (dense) layout.
    BRASA_CHECK(autograd::is_non_overlapping_and_dense(t),
                "as_strided: backward through as_strided of an input ",
                "with overlapping or non-dense memory (strides ", t.strides(),
                ") is not supported");
    autograd::record_view(
        autograd::as_strided_backward_name(), t, out,
        autograd::as_strided_fn(size, stride, off - t.storage_offset(), t.strides()));
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  BRASA_CHECK(t.dim() > 0, "chunk: expects at least a 1-dimensional tensor");
  BRASA_CHECK(chunks > 0, "chunk: expects `chunks` to be greater than 0, got: ", chunks);
  int64_t d = maybe_wrap_dim(dim, t.dim(), "chunk");
  int64_t sz = t.size(d);
  int64_t split_size = (sz + chunks - 1) / chunks;
  if (split_size == 0 && sz == 0) {
    std::vector<Tensor> out;
    for (int64_t i = 0; i < chunks; ++i) out.push_back(slice(t, d, 0, 0));
    return out;
  }
  return split(t, split_size, d);
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  BRASA_CHECK(t.dim() > 0, "split: expects at least a 1-dimensional tensor");
  BRASA_CHECK(split_size >= 0, "split: split_size must be non-negative, got ", split_size);
  int64_t d = maybe_wrap_dim(dim, t.dim(), "split");
  int64_t sz = t.size(d);
  BRASA_CHECK(split_size > 0 || sz == 0,
              "split: split_size can only be 0 if dimension size is 0, but got dimension size of ",
              sz);
  std::vector<Tensor> out;
  if (sz == 0) return {t};
  for (int64_t s = 0; s < sz; s += split_size)
    out.push_back(slice(t, d, s, std::min(sz, s + split_size)));
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef sizes, int64_t dim) {
  int64_t d = maybe_wrap_dim(dim, t.dim(), "split_with_sizes");
  int64_t total = 0;
  for (auto s : sizes) {
    BRASA_CHECK(s >= 0, "split_with_sizes: negative split size ", s);
    total += s;
  }
  BRASA_CHECK(total == t.size(d), "split_with_sizes: expects split_sizes to sum exactly to ",
              t.size(d), " (input tensor's size at dimension ", d,
              "), but got split_sizes=", sizes);
  std::vector<Tensor> out;
  int64_t s = 0;
  for (auto n : sizes) out.push_back(slice(t, d, s, s + n)), s += n;
  return out;
}

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  int64_t d = maybe_wrap_dim(dim, t.dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < t.size(d); ++i) out.push_back(select(t, d, i));
  return out;
}

namespace {
// cat of contiguous CPU inputs of the result's dtype: for each index before
// `d`, every input's run is copied in turn, so that the result is written
// front to back once (a strided copy per input went over it once each).
bool cat_contiguous_cpu(TensorList tensors, const std::vector<int64_t>& offsets, int64_t d,
                        const Tensor& out) {
  if (!out.is_cpu() || out.numel() == 0) return false;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (offsets[i] >= 0 &&
        (!tensors[i].is_cpu() || tensors[i].dtype() != out.dtype() || !tensors[i].is_contiguous()))
      return false;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= out.size(k);
  for (int64_t k = d + 1; k < out.dim(); ++k) inner *= out.size(k);
  const int64_t item = out.element_size(), row = out.size(d) * inner * item;
  char* dst = static_cast<char*>(out.data_ptr());
  std::vector<const char*> src;
  std::vector<int64_t> bytes, at;  // each input's run per outer index, and where it lands
  for (size_t i = 0; i < tensors.size(); ++i)
    if (offsets[i] >= 0 && tensors[i].numel() > 0) {
      src.push_back(static_cast<const char*>(tensors[i].data_ptr()));
      bytes.push_back(tensors[i].size(d) * inner * item);
      at.push_back(offsets[i] * inner * item);
    }
  const int64_t grain = std::max<int64_t>(1, (int64_t(64) << 10) / std::max<int64_t>(row, 1));
  parallel_for(0, outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o)
      for (size_t i = 0; i < src.size(); ++i)
        std::memcpy(dst + o * row + at[i], src[i] + o * bytes[i], bytes[i]);
  });
  return true;
}
}  // namespace

Tensor cat(TensorList tensors, int64_t dim) {
  BRASA_CHECK(!tensors.empty(), "cat: expected a non-empty list of Tensors");
  // Legacy rule kept by PyTorch: 1-D empty tensors are skipped.
  const Tensor* ref = nullptr;
  ScalarType dtype = tensors[0].dtype();
  for (const auto& t : tensors) {
    dtype = promoteTypes(dtype, t.dtype());
    if (!(t.dim() == 1 && t.numel() == 0) && !ref) ref = &t;
  }
  if (!ref) return empty({0}, tensors[0].options().dtype(dtype));
  int64_t d = maybe_wrap_dim(dim, ref->dim(), "cat");
  BRASA_CHECK(ref->dim() > 0, "cat: zero-dimensional tensor cannot be concatenated");
  DimVector shape(ref->sizes().begin(), ref->sizes().end());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() == 1 && t.numel() == 0) continue;
    BRASA_CHECK(t.dim() == ref->dim(), "cat: tensors must have same number of dimensions: got ",
                ref->dim(), " and ", t.dim(), " (tensor ", i, ")");
    for (int64_t k = 0; k < t.dim(); ++k)
      BRASA_CHECK(k == d || t.size(k) == ref->size(k),
                  "cat: sizes of tensors must match except in dimension ", d, ". Expected size ",
                  ref->size(k), " but got size ", t.size(k), " for tensor number ", i,
                  " in the list");
    total += t.size(d);
  }
  shape[d] = total;
  autograd::Recorder r(kCatBackward, tensors);
  Tensor out = empty(shape, ref->options().dtype(dtype));
  int64_t off = 0;
  std::vector<int64_t> offsets;  // start of each input (-1: skipped empty input)
  for (const auto& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) {
      offsets.push_back(-1);
      continue;
    }
    offsets.push_back(off);
    off += t.size(d);
  }
  if (!cat_contiguous_cpu(tensors, offsets, d, out))
    for (size_t i = 0; i < tensors.size(); ++i)
      if (offsets[i] >= 0)
        detail::copy_kernel(slice(out, d, offsets[i], offsets[i] + tensors[i].size(d)), tensors[i]);
  if (r) {
    std::vector<int64_t> lengths;
    for (const auto& t : tensors) lengths.push_back(t.dim() == 1 && t.numel() == 0 ? 0 : t.size(d));
    r.finish(out, [d, offsets, lengths](FormulaNode& n, const variable_list& g) {
      variable_list grads(offsets.size());
      for (size_t i = 0; i < offsets.size(); ++i)
        if (n.needs(i) && offsets[i] >= 0) grads[i] = narrow(g[0], d, offsets[i], lengths[i]);
      return grads;
    });
  }
  return out;
}

Tensor concat(TensorList tensors, int64_t dim) { return cat(tensors, dim); }

Tensor stack(TensorList tensors, int64_t dim) {
  BRASA_CHECK(!tensors.empty(), "stack: expects a non-empty TensorList");
  for (size_t i = 1; i < tensors.size(); ++i)
    BRASA_CHECK(tensors[i].sizes() == tensors[0].sizes(),
                "stack: expects each tensor to be equal size, but got ", tensors[0].sizes(),
                " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  int64_t d = maybe_wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> us;
  for (const auto& t : tensors) us.push_back(unsqueeze(t, d));
  return cat(us, d);
}

Tensor hstack(TensorList tensors) {
  BRASA_CHECK(!tensors.empty(), "hstack: expects a non-empty TensorList");
  return cat(tensors, tensors[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(TensorList tensors) {
  std::vector<Tensor> ts;
  for (const auto& t : tensors) ts.push_back(t.dim() < 2 ? reshape(t, {1, -1}) : t);
  return cat(ts, 0);
}

static Tensor flip_kernel(const Tensor& t, IntArrayRef dims);
Tensor flip(const Tensor& t, IntArrayRef dims) {
  DimVector ds = dims_of(dims);
  return recorded(kFlipBackward, t, flip_kernel(t, dims),
                  [ds](const Tensor& g) { return flip(g, ds); });
}

static Tensor flip_kernel(const Tensor& t, IntArrayRef dims) {
  // A view with negative strides is not allowed, so flip copies: read through
  // a view that walks the flipped dims backwards via the loop's offsets.
  Tensor out = empty(t.sizes(), t.options());
  if (t.numel() == 0) return out;
  std::vector<bool> flipped(t.dim(), false);
  for (auto d : dims) {
    int64_t w = maybe_wrap_dim(d, t.dim(), "flip");
    BRASA_CHECK(!flipped[w], "flip: dim ", w, " appears multiple times in the list of dims");
    flipped[w] = true;
  }
  kernel<FlipKernel>(t.device())(out, t, flipped);
  return out;
}

Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty()) {
    BRASA_CHECK(shifts.size() == 1, "roll: shifts ", shifts,
                " must have one entry when dims is empty");
    return roll(flatten(t), shifts, {0}).view(t.sizes());
  }
  BRASA_CHECK(shifts.size() == dims.size(),
              "roll: shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims: ", dims.size());
  Tensor cur = t;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = maybe_wrap_dim(dims[i], t.dim(), "roll");
    int64_t n = t.size(d);
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    cur = cat({slice(cur, d, n - s, n), slice(cur, d, 0, n - s)}, d);
  }
  return cur.is_same(t) ? clone(t) : cur;
}

Tensor repeat(const Tensor& t, IntArrayRef repeats) {
  BRASA_CHECK(static_cast<int64_t>(repeats.size()) >= t.dim(),
              "repeat: number of dimensions of repeat dims (", repeats.size(),
              ") can not be smaller than number of dimensions of tensor (", t.dim(), ")");
  int64_t n = static_cast<int64_t>(repeats.size());
  // View the input as [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...].
  DimVector padded(n - t.dim(), 1), xs, target, out_shape;
  for (auto s : t.sizes()) padded.push_back(s);
  for (int64_t i = 0; i < n; ++i) {
    BRASA_CHECK(repeats[i] >= 0, "repeat: repeats can not be negative, got ", repeats);
    xs.push_back(1), xs.push_back(padded[i]);
    target.push_back(repeats[i]), target.push_back(padded[i]);
    out_shape.push_back(repeats[i] * padded[i]);
  }
  autograd::Recorder r(kRepeatBackward, t);
  Tensor src = expand(reshape(t, xs), target);
  Tensor out = empty(target, t.options());
  detail::copy_kernel(out, src);
  out = out.view(out_shape);
  if (r) {
    // Sum the tiles: view the gradient as [r0, s0, r1, s1, ...] and reduce the r's.
    DimVector in = dims_of(t.sizes()), rep_dims;
    for (int64_t i = 0; i < n; ++i) rep_dims.push_back(2 * i);
    r.finish(out, [target, rep_dims, in](FormulaNode&, const variable_list& g) {
      return variable_list{reshape(sum(reshape(g[0], target), rep_dims), in)};
    });
  }
  return out;
}

Tensor tile(const Tensor& t, IntArrayRef dims) {
  DimVector reps(dims.begin(), dims.end());
  while (static_cast<int64_t>(reps.size()) < t.dim()) reps.insert(0, 1);
  return repeat(t, reps);
}

Tensor diag(const Tensor& t, int64_t k) {
  BRASA_CHECK(t.dim() == 1 || t.dim() == 2, "diag: expected a 1-D or 2-D tensor, got ", t.dim(),
              "-D");
  if (t.dim() == 2) return clone(diagonal(t, k, 0, 1));
  int64_t n = t.size(0) + std::abs(k);
  autograd::Recorder r(kDiagEmbedBackward, t);
  Tensor out = zeros({n, n}, t.options());
  detail::copy_kernel(diagonal(out, k, 0, 1), t);
  if (r)
    r.finish(out, [k](FormulaNode&, const variable_list& g) {
      return variable_list{diagonal(g[0], k, 0, 1)};
    });
  return out;
}

static Tensor triangle(const Tensor& t, int64_t k, bool lower, const char* op) {
  BRASA_CHECK(t.dim() >= 2, op, ": input tensor must have at least 2 dimensions, got ", t.dim());
  autograd::Recorder r(lower ? kTrilBackward : kTriuBackward, t);
  Tensor out = clone(t);
  int64_t rows = t.size(-2), cols = t.size(-1);
  // An empty tensor has nothing to zero (and no [-1, rows, cols] view).
  Tensor m = out.numel() > 0 ? out.view({-1, rows, cols}) : out;
  for (int64_t i = 0; i < rows && out.numel() > 0; ++i) {
    // lower: keep j <= i + k; upper: keep j >= i + k.
    int64_t b = lower ? std::clamp<int64_t>(i + k + 1, 0, cols) : 0;
    int64_t e = lower ? cols : std::clamp<int64_t>(i + k, 0, cols);
    if (b < e) detail::fill_kernel(slice(select(m, 1, i), 1, b, e), 0);
  }
  if (r)
    r.finish(out, [k, lower](FormulaNode&, const variable_list& g) {
      return variable_list{lower ? tril(g[0], k) : triu(g[0], k)};
    });
  return out;
}
Tensor tril(const Tensor& t, int64_t k) { return triangle(t, k, true, "tril"); }
Tensor triu(const Tensor& t, int64_t k) { return triangle(t, k, false, "triu"); }

}  // namespace brasa
