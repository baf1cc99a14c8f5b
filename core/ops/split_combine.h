#pragma once
// libtorch's NumPy-style splitting and combining ops (tensor_split, hsplit,
// dstack, block_diag, cartesian_prod, combinations, ...), index builders
// (tril_indices, triu_indices, range, vander) and small products and norms
// (inner, chain_matmul, dist, renorm, frobenius_norm). All are composed of
// differentiable ops, so autograd handles them.
#include <brasa/tensor/tensor.h>

#include <optional>
#include <vector>

namespace brasa {

// `sections` parts of near-equal size (the first size % sections one longer),
// or parts cut before each of `indices`; views of self.
std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim = 0);
// indices_or_sections: an int64 0-dim tensor (sections) or 1-D (indices), on the CPU.
std::vector<Tensor> tensor_split(const Tensor& self, const Tensor& indices_or_sections,
                                 int64_t dim = 0);
// Along dim 1 (dim 0 for 1-D), dim 0 and dim 2; sections must divide the dim.
std::vector<Tensor> hsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices);
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices);
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections);
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices);
// Stacks along dim 2 after making every tensor at least 3-D.
Tensor dstack(TensorList tensors);
// The tensors (0-, 1- or 2-D) as blocks on the diagonal of a 2-D tensor.
Tensor block_diag(TensorList tensors);
// Every combination of one element from each 1-D tensor: [prod(n_i), k].
Tensor cartesian_prod(TensorList tensors);
// The r-element combinations of a 1-D tensor's elements, in order: [count, r].
Tensor combinations(const Tensor& self, int64_t r = 2, bool with_replacement = false);
// A 2-D tensor with self's elements (flattened) on the offset-th diagonal.
Tensor diagflat(const Tensor& self, int64_t offset = 0);
// gather along dim after broadcasting self and indices (except along dim);
// without dim, on the flattened tensors.
Tensor take_along_dim(const Tensor& self, const Tensor& indices,
                      std::optional<int64_t> dim = std::nullopt);
// The (row, col) coordinates of the lower / upper triangle, [2, count].
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0,
                    const TensorOptions& options = TensorOptions().dtype(kLong));
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0,
                    const TensorOptions& options = TensorOptions().dtype(kLong));
// start, start + step, ... up to and including end (deprecated in PyTorch,
// still in libtorch); the default dtype is float.
Tensor range(const Scalar& start, const Scalar& end, const TensorOptions& options = {});
Tensor range(const Scalar& start, const Scalar& end, const Scalar& step,
             const TensorOptions& options = {});
// Columns x^(N-1), ..., x^0 of a 1-D x (x^0, ..., x^(N-1) with increasing).
Tensor vander(const Tensor& x, std::optional<int64_t> N = std::nullopt, bool increasing = false);
// Sum over the last dims of both: [a..., b...].
Tensor inner(const Tensor& self, const Tensor& other);
Tensor chain_matmul(TensorList matrices);
// The p-norm of self - other.
Tensor dist(const Tensor& self, const Tensor& other, const Scalar& p = 2);
// Each slice along dim whose p-norm exceeds maxnorm scaled to norm maxnorm.
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm);
Tensor frobenius_norm(const Tensor& self);
// The pow-norm over every dim but dim (all dims with dim -1), kept as size-1 dims.
Tensor norm_except_dim(const Tensor& v, int64_t pow = 2, int64_t dim = 0);
Tensor frobenius_norm(const Tensor& self, IntArrayRef dim, bool keepdim = false);

}  // namespace brasa
