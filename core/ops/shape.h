#pragma once
// Shape ops. Views share storage and version counter with their base.
#include <brasa/tensor/tensor.h>

#include <vector>

namespace brasa {

// Wraps a possibly negative dim into [0, ndim); names the op in the error.
int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, const char* op);

Tensor view(const Tensor& t, IntArrayRef size);
Tensor reshape(const Tensor& t, IntArrayRef size);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes);
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor movedim(const Tensor& t, int64_t src, int64_t dst);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor t(const Tensor& t);
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor expand(const Tensor& t, IntArrayRef size);
Tensor broadcast_to(const Tensor& t, IntArrayRef size);
std::vector<Tensor> broadcast_tensors(TensorList tensors);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step = 1);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step);
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor as_strided(const Tensor& t, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset = std::nullopt);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef sizes, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& t, int64_t dim = 0);

Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor concat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
Tensor hstack(TensorList tensors);
Tensor vstack(TensorList tensors);
Tensor flip(const Tensor& t, IntArrayRef dims);
Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims = {});
Tensor repeat(const Tensor& t, IntArrayRef repeats);
Tensor tile(const Tensor& t, IntArrayRef dims);
Tensor diag(const Tensor& t, int64_t diagonal = 0);
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);

namespace detail {
// A tensor over base's storage with the given geometry and dtype (no
// autograd record; in grad mode it remembers base's root as its view base).
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                 ScalarType dtype);
}  // namespace detail

}  // namespace brasa
