#pragma once
// Ops that rearrange or combine tensors (libtorch's kron, diff, rot90,
// diag_embed, meshgrid, repeat_interleave, trace, cross, cdist, index_copy,
// index_fill, masked_scatter), built from views and differentiable ops, so
// their gradients are those of the ops they are made of.
#include <brasa/tensor/tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace brasa {

// Sum of the main diagonal of a 2-D tensor.
Tensor trace(const Tensor& self);
// Kronecker product: every element of a scales a copy of b.
Tensor kron(const Tensor& a, const Tensor& b);
// n-th forward difference along dim, after prepending/appending.
Tensor diff(const Tensor& self, int64_t n = 1, int64_t dim = -1,
            const std::optional<Tensor>& prepend = {}, const std::optional<Tensor>& append = {});
// Rotates by 90 degrees k times in the plane of dims, from the first towards the second.
Tensor rot90(const Tensor& self, int64_t k = 1, IntArrayRef dims = {0, 1});
// Puts the last dim of self on the diagonal (offset) of the planes (dim1, dim2) of a new tensor.
Tensor diag_embed(const Tensor& self, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
// Coordinate grids of 0-/1-D tensors; indexing "ij" (matrix) or "xy" (Cartesian).
std::vector<Tensor> meshgrid(TensorList tensors, const std::string& indexing = "ij");
// Each element (or slice along dim) repeated `repeats` times, in place order.
Tensor repeat_interleave(const Tensor& self, int64_t repeats,
                         std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& self, const Tensor& repeats,
                         std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
// i repeated repeats[i] times, for every i (the indices the forms above gather).
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size = std::nullopt);
// Cross product of 3-vectors along dim (default: the first dim of size 3).
Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim = std::nullopt);
Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim = -1);
// p-norm distances between the rows of x1 [..., P, M] and x2 [..., R, M]: [..., P, R].
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);
// self with the slices at `index` along dim replaced by those of source.
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
// self with the slices at `index` along dim set to value.
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);
// self with the places where mask (broadcast) is true taken, in order, from source.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);

}  // namespace brasa
