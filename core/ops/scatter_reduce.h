#pragma once
// Reductions into chosen positions: scatter_reduce (each element of src is
// combined into self at its index along dim) and index_reduce (whole slices
// of source into the slices of self that index names). Reductions "sum",
// "prod", "mean", "amax" and "amin" (index_reduce: all but "sum", which is
// index_add); include_self = false leaves self's values out of the positions
// that receive something. Differentiable in self and src as in PyTorch
// (amax/amin share a gradient evenly among the tied elements).
#include <brasa/tensor/tensor.h>

#include <string>

namespace brasa {

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    const std::string& reduce, bool include_self = true);

}  // namespace brasa
