#pragma once
// Reductions over all or given dims (keepdim as in PyTorch), softmax family and scans.
#include <brasa/tensor/tensor.h>

#include <tuple>

namespace brasa {

Tensor sum(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& x, IntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntArrayRef dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& x);
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& a, const Tensor& b);
Tensor min(const Tensor& x);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor min(const Tensor& a, const Tensor& b);
Tensor amax(const Tensor& x, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntArrayRef dim = {}, bool keepdim = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// correction = 1 is the unbiased estimator (PyTorch's default).
Tensor var(const Tensor& x, bool unbiased = true);
Tensor var(const Tensor& x, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, bool unbiased = true);
Tensor std(const Tensor& x, IntArrayRef dim, bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntArrayRef dim, bool unbiased = true,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntArrayRef dim, bool unbiased = true,
                                    bool keepdim = false);
// p: 2 (default), 1, inf, -inf, 0 or any positive number; "fro" is p = 2.
Tensor norm(const Tensor& x, const Scalar& p = 2);
Tensor norm(const Tensor& x, std::optional<Scalar> p, IntArrayRef dim, bool keepdim = false);
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim = false);
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim = std::nullopt);
Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

}  // namespace brasa
