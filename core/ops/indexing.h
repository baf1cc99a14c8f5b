#pragma once
// Gather/scatter family and advanced indexing.
#include <brasa/tensor/indexing.h>
#include <brasa/tensor/tensor.h>

#include <optional>
#include <vector>

namespace brasa {

// Advanced indexing: one optional index tensor per leading dim (undefined = ':').
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices);
Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                   const Tensor& values, bool accumulate = false);
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate = false);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha = 1);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor nonzero(const Tensor& self);
std::vector<Tensor> nonzero_numpy(const Tensor& self);
Tensor take(const Tensor& self, const Tensor& index);

namespace detail {
Tensor& scatter_inplace(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        bool add);
Tensor& index_add_inplace(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                          const Scalar& alpha);
Tensor index_with(const Tensor& self, ArrayRef<TensorIndex> indices);
Tensor& index_put_with(Tensor& self, ArrayRef<TensorIndex> indices, const Tensor& values);
}  // namespace detail

}  // namespace brasa
