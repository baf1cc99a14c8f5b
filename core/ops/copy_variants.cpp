#include <brasa/ops/elementwise.h>
#include <brasa/ops/copy_variants.h>
#include <brasa/ops/shape.h>

namespace brasa {

using detail::check_defined;

namespace {
// The view's values in a tensor of their own (contiguous), keeping autograd.
Tensor own(const Tensor& view) { return view.is_contiguous() ? view.clone() : view.contiguous(); }
std::vector<Tensor> own_all(std::vector<Tensor> views) {
  for (Tensor& v : views) v = own(v);
  return views;
}
// A clone of self whose part `view_of` picks is replaced by src; the copy_
// into the clone's view records the gradients to both.
template <class ViewOf>
Tensor scatter_into_view(const char* op, const Tensor& self, const Tensor& src, ViewOf view_of) {
  check_defined(op, self);
  check_defined(op, src);
  Tensor out = self.clone();
  Tensor part = view_of(out);
  BRASA_CHECK(part.sizes() == src.sizes(), op, ": expected src to have a size equal to the slice ",
              "of self; src size = ", src.sizes(), ", slice size = ", part.sizes());
  part.copy_(src);
  return out;
}
}  // namespace

Tensor alias_copy(const Tensor& self) {
  check_defined("alias_copy", self);
  return own(self);
}
Tensor detach_copy(const Tensor& self) {
  check_defined("detach_copy", self);
  return own(self.detach());
}
Tensor as_strided_copy(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                       std::optional<int64_t> storage_offset) {
  return own(as_strided(self, size, stride, storage_offset));
}
Tensor diagonal_copy(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  return own(diagonal(self, offset, dim1, dim2));
}
Tensor expand_copy(const Tensor& self, IntArrayRef size, bool /*implicit*/) {
  return own(expand(self, size));
}
Tensor narrow_copy(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  return own(narrow(self, dim, start, length));
}
Tensor permute_copy(const Tensor& self, IntArrayRef dims) { return own(permute(self, dims)); }
Tensor select_copy(const Tensor& self, int64_t dim, int64_t index) {
  return own(select(self, dim, index));
}
Tensor slice_copy(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                  std::optional<int64_t> end, int64_t step) {
  return own(slice(self, dim, start, end, step));
}
std::vector<Tensor> split_copy(const Tensor& self, int64_t split_size, int64_t dim) {
  return own_all(split(self, split_size, dim));
}
std::vector<Tensor> split_with_sizes_copy(const Tensor& self, IntArrayRef split_sizes,
                                          int64_t dim) {
  return own_all(split_with_sizes(self, split_sizes, dim));
}
Tensor squeeze_copy(const Tensor& self) { return own(squeeze(self)); }
Tensor squeeze_copy(const Tensor& self, int64_t dim) { return own(squeeze(self, dim)); }
Tensor t_copy(const Tensor& self) { return own(t(self)); }
Tensor transpose_copy(const Tensor& self, int64_t dim0, int64_t dim1) {
  return own(transpose(self, dim0, dim1));
}
std::vector<Tensor> unbind_copy(const Tensor& self, int64_t dim) {
  return own_all(unbind(self, dim));
}
Tensor unfold_copy(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  return own(unfold(self, dimension, size, step));
}
Tensor unsqueeze_copy(const Tensor& self, int64_t dim) { return own(unsqueeze(self, dim)); }
Tensor view_copy(const Tensor& self, IntArrayRef size) { return own(view(self, size)); }

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  return scatter_into_view("select_scatter", self, src,
                           [&](const Tensor& o) { return select(o, dim, index); });
}
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim,
                     std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  return scatter_into_view("slice_scatter", self, src,
                           [&](const Tensor& o) { return slice(o, dim, start, end, step); });
}
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1,
                        int64_t dim2) {
  return scatter_into_view("diagonal_scatter", self, src,
                           [&](const Tensor& o) { return diagonal(o, offset, dim1, dim2); });
}
Tensor as_strided_scatter(const Tensor& self, const Tensor& src, IntArrayRef size,
                          IntArrayRef stride, std::optional<int64_t> storage_offset) {
  check_defined("as_strided_scatter", self);
  // The strides address self's elements as a contiguous tensor does.
  Tensor base = self.contiguous();
  return scatter_into_view("as_strided_scatter", base, src, [&](const Tensor& o) {
    return as_strided(o, size, stride, storage_offset);
  });
}

std::vector<Tensor> unsafe_chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  return chunk(self, chunks, dim);
}
std::vector<Tensor> unsafe_split(const Tensor& self, int64_t split_size, int64_t dim) {
  return split(self, split_size, dim);
}
std::vector<Tensor> unsafe_split_with_sizes(const Tensor& self, IntArrayRef split_sizes,
                                            int64_t dim) {
  return split_with_sizes(self, split_sizes, dim);
}

}  // namespace brasa
