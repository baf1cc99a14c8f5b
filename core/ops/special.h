#pragma once
// Special functions libtorch has at the top level: erfc, lgamma, digamma,
// polygamma, mvlgamma, the modified Bessel function i0 and the incomplete
// gamma functions, with their
// derivatives (lgamma' = digamma, polygamma(n)' = polygamma(n + 1),
// i0' = i1). They are computed in double on the CPU; a CUDA tensor's values
// make a round trip through host memory.
#include <brasa/tensor/tensor.h>

namespace brasa {

Tensor erfc(const Tensor& self);  // 1 - erf(x), accurate where erf(x) is near 1
Tensor lgamma(const Tensor& self);
Tensor digamma(const Tensor& self);
// The n-th derivative of digamma (n >= 0).
Tensor polygamma(int64_t n, const Tensor& self);
// The log of the multivariate gamma function of dimension p (every element > (p - 1) / 2).
Tensor mvlgamma(const Tensor& self, int64_t p);
Tensor i0(const Tensor& self);
// The regularized lower and upper incomplete gamma functions P(a, x) and
// Q(a, x) = 1 - P(a, x), a = self, x = other (broadcast); differentiable in
// x only, as in PyTorch.
Tensor igamma(const Tensor& self, const Tensor& other);
Tensor igammac(const Tensor& self, const Tensor& other);

namespace detail {
double digamma_scalar(double x);
double polygamma_scalar(int64_t n, double x);
double i0_scalar(double x);
double i1_scalar(double x);
double igamma_scalar(double a, double x, bool upper);
}  // namespace detail

}  // namespace brasa
