#pragma once
// libtorch's alternative spellings of existing ops (NumPy-style names:
// torch::arccos, torch::greater, torch::multiply, torch::swapaxes, ...) and
// a few small composite ops (inverse hyperbolics, hypot, logaddexp, xlogy,
// logit, sinc, nansum, atleast_Nd), as libtorch 1.13 defines them. The
// composites are built from differentiable ops, so autograd handles them.
#include <brasa/tensor/tensor.h>

#include <optional>
#include <vector>

namespace brasa {

// Aliases.
Tensor arccos(const Tensor& self);
Tensor arcsin(const Tensor& self);
Tensor arctan(const Tensor& self);
Tensor arctan2(const Tensor& self, const Tensor& other);
Tensor greater(const Tensor& self, const Tensor& other);
Tensor greater_equal(const Tensor& self, const Tensor& other);
Tensor less(const Tensor& self, const Tensor& other);
Tensor less_equal(const Tensor& self, const Tensor& other);
Tensor not_equal(const Tensor& self, const Tensor& other);
Tensor multiply(const Tensor& self, const Tensor& other);
Tensor divide(const Tensor& self, const Tensor& other);
Tensor subtract(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor fix(const Tensor& self);  // trunc
Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1);
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor moveaxis(const Tensor& self, int64_t source, int64_t destination);
Tensor concatenate(TensorList tensors, int64_t dim = 0);
Tensor row_stack(TensorList tensors);
Tensor ravel(const Tensor& self);
Tensor fliplr(const Tensor& self);  // flips dim 1 (needs >= 2 dims)
Tensor flipud(const Tensor& self);  // flips dim 0
Tensor positive(const Tensor& self);

// Composites.
Tensor acosh(const Tensor& self);  // log(x + sqrt(x^2 - 1))
Tensor asinh(const Tensor& self);  // log(x + sqrt(x^2 + 1)), odd
Tensor atanh(const Tensor& self);  // log((1 + x) / (1 - x)) / 2
Tensor arccosh(const Tensor& self);
Tensor arcsinh(const Tensor& self);
Tensor arctanh(const Tensor& self);
Tensor deg2rad(const Tensor& self);
Tensor rad2deg(const Tensor& self);
Tensor hypot(const Tensor& self, const Tensor& other);
Tensor logaddexp(const Tensor& self, const Tensor& other);   // log(e^a + e^b), stable
Tensor logaddexp2(const Tensor& self, const Tensor& other);  // log2(2^a + 2^b)
Tensor xlogy(const Tensor& self, const Tensor& other);       // 0 where self == 0
Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt);
Tensor sinc(const Tensor& self);  // sin(pi x) / (pi x), 1 at 0
Tensor nansum(const Tensor& self);
Tensor nanmean(const Tensor& self);
Tensor atleast_1d(const Tensor& self);
Tensor atleast_2d(const Tensor& self);
Tensor atleast_3d(const Tensor& self);
Tensor column_stack(TensorList tensors);

}  // namespace brasa
