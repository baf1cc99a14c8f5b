#pragma once
#include <brasa/tensor/tensor.h>

#include <tuple>

namespace brasa {

// NaN sorts as the largest value, as in PyTorch.
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::optional<bool> stable, int64_t dim = -1,
                                bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);
std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1,
                                    bool keepdim = false);
Tensor msort(const Tensor& x);
// (values, inverse indices, counts) of the flattened input; inverse/counts are
// empty tensors unless asked for.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted = true,
                                          bool return_inverse = false, bool return_counts = false);
std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted = true,
                                            bool return_inverse = false,
                                            bool return_counts = false);

}  // namespace brasa
