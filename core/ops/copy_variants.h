#pragma once
// libtorch's copying forms of the view ops (torch::narrow_copy,
// torch::permute_copy, ...: the view's values in a new contiguous tensor),
// the *_scatter ops (self with a view of it replaced by src, out of place)
// and the unsafe_ spellings of split and chunk.
#include <brasa/tensor/tensor.h>

#include <optional>
#include <vector>

namespace brasa {

Tensor alias_copy(const Tensor& self);
Tensor detach_copy(const Tensor& self);
Tensor as_strided_copy(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                       std::optional<int64_t> storage_offset = std::nullopt);
Tensor diagonal_copy(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor expand_copy(const Tensor& self, IntArrayRef size, bool implicit = false);
Tensor narrow_copy(const Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor permute_copy(const Tensor& self, IntArrayRef dims);
Tensor select_copy(const Tensor& self, int64_t dim, int64_t index);
Tensor slice_copy(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
                  std::optional<int64_t> end = std::nullopt, int64_t step = 1);
std::vector<Tensor> split_copy(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes_copy(const Tensor& self, IntArrayRef split_sizes,
                                          int64_t dim = 0);
Tensor squeeze_copy(const Tensor& self);
Tensor squeeze_copy(const Tensor& self, int64_t dim);
Tensor t_copy(const Tensor& self);
Tensor transpose_copy(const Tensor& self, int64_t dim0, int64_t dim1);
std::vector<Tensor> unbind_copy(const Tensor& self, int64_t dim = 0);
Tensor unfold_copy(const Tensor& self, int64_t dimension, int64_t size, int64_t step);
Tensor unsqueeze_copy(const Tensor& self, int64_t dim);
Tensor view_copy(const Tensor& self, IntArrayRef size);

// self with the given view of it replaced by src (which has the view's shape).
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index);
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim = 0,
                     std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset = 0, int64_t dim1 = 0,
                        int64_t dim2 = 1);
Tensor as_strided_scatter(const Tensor& self, const Tensor& src, IntArrayRef size,
                          IntArrayRef stride, std::optional<int64_t> storage_offset = std::nullopt);

std::vector<Tensor> unsafe_chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unsafe_split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> unsafe_split_with_sizes(const Tensor& self, IntArrayRef split_sizes,
                                            int64_t dim = 0);

}  // namespace brasa
