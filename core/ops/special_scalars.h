#pragma once
// Scalar kernels of torch::special's functions (ops/special_functions.h),
// in double: each is a plain function of one (or two) doubles, computed by
// a method chosen per range so that it keeps full precision (series, Miller's
// backward recurrence, the trapezoidal rule on analytic integrands,
// asymptotic expansions, Newton's method). Internal to the ops.

#include <cstdint>

namespace brasa::detail {

double erfcx_scalar(double x);     // exp(x^2) erfc(x)
double ndtr_scalar(double x);      // the standard normal CDF
double log_ndtr_scalar(double x);  // its log, accurate in both tails
double ndtri_scalar(double p);     // its inverse
double i0e_scalar(double x);       // exp(-|x|) I0(x)
double i1e_scalar(double x);       // exp(-|x|) I1(x)
// exp(x) K_nu(x) for x >= 0 (nu >= 0): the exponentially scaled modified
// Bessel function of the second kind.
double bessel_k_scaled(double nu, double x);
double bessel_j0_scalar(double x);
double bessel_j1_scalar(double x);
double bessel_y0_scalar(double x);
double bessel_y1_scalar(double x);
double airy_ai_scalar(double x);
// The Hurwitz zeta function sum_k (k + q)^-s, with PyTorch's domain rules.
double hurwitz_zeta_scalar(double s, double q);

}  // namespace brasa::detail
