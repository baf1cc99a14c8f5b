#pragma once
// torch::special: libtorch's namespace of special functions
// (torch/special.h), with PyTorch's names, domains and derivatives. The
// functions libtorch also has at the top level are the same ops under their
// special:: names (gammaln is lgamma, expit is sigmoid, psi is digamma, ...);
// the rest are computed elementwise in double on the CPU (ops/special_scalars.h)
// to full double precision. Differentiable where PyTorch's are: i0e, i1e,
// entr, erfcx, ndtr, log_ndtr, ndtri, xlog1py and zeta (in its second
// argument); the Bessel and Airy functions and the orthogonal polynomials
// are not (a backward through them is an error, as in PyTorch).
#include <brasa/tensor/tensor.h>

#include <optional>

namespace brasa::special {

// The top-level functions under their special:: names.
Tensor digamma(const Tensor& self);
Tensor psi(const Tensor& self);
Tensor polygamma(int64_t n, const Tensor& self);
Tensor gammaln(const Tensor& self);
Tensor multigammaln(const Tensor& self, int64_t p);
Tensor gammainc(const Tensor& self, const Tensor& other);
Tensor gammaincc(const Tensor& self, const Tensor& other);
Tensor erf(const Tensor& self);
Tensor erfc(const Tensor& self);
Tensor erfinv(const Tensor& self);
Tensor exp2(const Tensor& self);
Tensor expm1(const Tensor& self);
Tensor log1p(const Tensor& self);
Tensor expit(const Tensor& self);  // the logistic sigmoid
Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt);
Tensor sinc(const Tensor& self);
Tensor round(const Tensor& self);
Tensor xlogy(const Tensor& self, const Tensor& other);
Tensor xlogy(const Scalar& self, const Tensor& other);
Tensor xlogy(const Tensor& self, const Scalar& other);
Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor logsumexp(const Tensor& self, IntArrayRef dims, bool keepdim = false);

// Modified Bessel functions of the first kind, and exponentially scaled: i0e(x) = exp(-|x|) i0(x).
Tensor i0(const Tensor& self);
Tensor i1(const Tensor& self);
Tensor i0e(const Tensor& self);
Tensor i1e(const Tensor& self);
Tensor modified_bessel_i0(const Tensor& self);
Tensor modified_bessel_i1(const Tensor& self);
// ... of the second kind (x > 0), and scaled by exp(x).
Tensor modified_bessel_k0(const Tensor& self);
Tensor modified_bessel_k1(const Tensor& self);
Tensor scaled_modified_bessel_k0(const Tensor& x);
Tensor scaled_modified_bessel_k1(const Tensor& x);
// Bessel functions of the first and second kind (Y for x > 0), sin(x) / x, the Airy function Ai.
Tensor bessel_j0(const Tensor& self);
Tensor bessel_j1(const Tensor& self);
Tensor bessel_y0(const Tensor& self);
Tensor bessel_y1(const Tensor& self);
Tensor spherical_bessel_j0(const Tensor& x);
Tensor airy_ai(const Tensor& x);

// -x log(x) (0 at 0, -inf below).
Tensor entr(const Tensor& self);
// exp(x^2) erfc(x), without overflow for large x.
Tensor erfcx(const Tensor& self);
// The standard normal distribution function, its log (accurate far into
// both tails) and its inverse.
Tensor ndtr(const Tensor& self);
Tensor log_ndtr(const Tensor& self);
Tensor ndtri(const Tensor& self);
// x log(1 + y), 0 where x = 0 (unless y is NaN).
Tensor xlog1py(const Tensor& self, const Tensor& other);
Tensor xlog1py(const Scalar& self, const Tensor& other);
Tensor xlog1py(const Tensor& self, const Scalar& other);
// The Hurwitz zeta function sum_k (k + q)^-x of x = self > 1 and q = other.
Tensor zeta(const Tensor& self, const Tensor& other);
Tensor zeta(const Scalar& self, const Tensor& other);
Tensor zeta(const Tensor& self, const Scalar& other);

// Orthogonal polynomials of degree n (n < 0 gives 0; a float n is truncated).
#define BRASA_DECLARE_POLYNOMIAL(name)           \
  Tensor name(const Tensor& x, const Tensor& n); \
  Tensor name(const Scalar& x, const Tensor& n); \
  Tensor name(const Tensor& x, const Scalar& n);
BRASA_DECLARE_POLYNOMIAL(chebyshev_polynomial_t)
BRASA_DECLARE_POLYNOMIAL(chebyshev_polynomial_u)
BRASA_DECLARE_POLYNOMIAL(chebyshev_polynomial_v)
BRASA_DECLARE_POLYNOMIAL(chebyshev_polynomial_w)
// The same at 2x - 1 (orthogonal on [0, 1]).
BRASA_DECLARE_POLYNOMIAL(shifted_chebyshev_polynomial_t)
BRASA_DECLARE_POLYNOMIAL(shifted_chebyshev_polynomial_u)
BRASA_DECLARE_POLYNOMIAL(shifted_chebyshev_polynomial_v)
BRASA_DECLARE_POLYNOMIAL(shifted_chebyshev_polynomial_w)
// Hermite's (physicists' H and probabilists' He), Laguerre's and Legendre's.
BRASA_DECLARE_POLYNOMIAL(hermite_polynomial_h)
BRASA_DECLARE_POLYNOMIAL(hermite_polynomial_he)
BRASA_DECLARE_POLYNOMIAL(laguerre_polynomial_l)
BRASA_DECLARE_POLYNOMIAL(legendre_polynomial_p)
#undef BRASA_DECLARE_POLYNOMIAL

}  // namespace brasa::special
