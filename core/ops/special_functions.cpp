// torch::special: the top-level ops under their special:: names, and the
// functions only special:: has, elementwise from ops/special_scalars.h.
#include <brasa/autograd/grad_mode.h>
#include <brasa/autograd/record.h>
#include <brasa/ops/aliases.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/special.h>
#include <brasa/ops/special_functions.h>
#include <brasa/ops/special_map.h>
#include <brasa/ops/special_scalars.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <numbers>

namespace brasa::special {

using detail::map_values;
using detail::special_op;

Tensor digamma(const Tensor& self) { return brasa::digamma(self); }
Tensor psi(const Tensor& self) { return brasa::digamma(self); }
Tensor polygamma(int64_t n, const Tensor& self) { return brasa::polygamma(n, self); }
Tensor gammaln(const Tensor& self) { return brasa::lgamma(self); }
Tensor multigammaln(const Tensor& self, int64_t p) { return brasa::mvlgamma(self, p); }
Tensor gammainc(const Tensor& self, const Tensor& other) { return brasa::igamma(self, other); }
Tensor gammaincc(const Tensor& self, const Tensor& other) { return brasa::igammac(self, other); }
Tensor erf(const Tensor& self) { return brasa::erf(self); }
Tensor erfc(const Tensor& self) { return brasa::erfc(self); }
Tensor erfinv(const Tensor& self) { return brasa::erfinv(self); }
Tensor exp2(const Tensor& self) { return brasa::exp2(self); }
Tensor expm1(const Tensor& self) { return brasa::expm1(self); }
Tensor log1p(const Tensor& self) { return brasa::log1p(self); }
Tensor expit(const Tensor& self) { return brasa::sigmoid(self); }
Tensor logit(const Tensor& self, std::optional<double> eps) { return brasa::logit(self, eps); }
Tensor sinc(const Tensor& self) { return brasa::sinc(self); }
Tensor round(const Tensor& self) { return brasa::round(self); }
Tensor xlogy(const Tensor& self, const Tensor& other) { return brasa::xlogy(self, other); }
Tensor xlogy(const Scalar& self, const Tensor& other) {
  return brasa::xlogy(detail::wrap_number(other, self), other);
}
Tensor xlogy(const Tensor& self, const Scalar& other) {
  return brasa::xlogy(self, detail::wrap_number(self, other));
}
Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return brasa::softmax(self, dim, dtype);
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return brasa::log_softmax(self, dim, dtype);
}
Tensor logsumexp(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return brasa::logsumexp(self, dims, keepdim);
}
Tensor i0(const Tensor& self) { return brasa::i0(self); }
Tensor modified_bessel_i0(const Tensor& self) { return brasa::i0(self); }
Tensor modified_bessel_i1(const Tensor& self) { return i1(self); }

namespace {

const autograd::BackwardName kI0eBackward("SpecialI0EBackward0");
const autograd::BackwardName kI1eBackward("SpecialI1EBackward0");
const autograd::BackwardName kEntrBackward("SpecialEntrBackward0");
const autograd::BackwardName kErfcxBackward("SpecialErfcxBackward0");
const autograd::BackwardName kNdtrBackward("SpecialNdtrBackward0");
const autograd::BackwardName kLogNdtrBackward("SpecialLogNdtrBackward0");
const autograd::BackwardName kNdtriBackward("SpecialNdtriBackward0");
const autograd::BackwardName kZetaBackward("SpecialZetaBackward0");

const double kSqrt2Pi = std::sqrt(2 * std::numbers::pi);

// A function PyTorch gives no derivative: values only. An input that
// requires grad is an error here rather than a silent zero gradient later.
template <class F>
Tensor without_derivative(const char* op, const Tensor& self, F f) {
  BRASA_CHECK(!self.defined() || !self.requires_grad() || !autograd::GradMode::is_enabled(), op,
              ": the derivative is not implemented (nor in PyTorch); pass a detached tensor or ",
              "call it under NoGradGuard");
  return map_values(op, self, f);
}

// f(a, b) on a and b broadcast, in double on the CPU; the result has their
// promoted floating dtype (float for integers) on a's device.
template <class F>
Tensor map_pairs(const char* op, const Tensor& a, const Tensor& b, F f) {
  detail::check_defined(op, a);
  detail::check_defined(op, b);
  BRASA_CHECK(a.device() == b.device(), op, ": expected both tensors on one device, got ",
              a.device(), " and ", b.device());
  BRASA_CHECK(!a.is_complex() && !b.is_complex(), op, ": not implemented for complex tensors");
  ScalarType type = detail::result_type(a, b);
  if (!isFloatingType(type)) type = kFloat;
  const DimVector shape = detail::broadcast_shapes(op, a.sizes(), b.sizes());
  Tensor av = a.detach().to(kCPU).to(kDouble).expand(shape).contiguous();
  Tensor bv = b.detach().to(kCPU).to(kDouble).expand(shape).contiguous();
  Tensor y = empty(shape, TensorOptions().dtype(kDouble));
  const double *pa = av.data_ptr<double>(), *pb = bv.data_ptr<double>();
  double* out = y.data_ptr<double>();
  for (int64_t i = 0; i < y.numel(); ++i) out[i] = f(pa[i], pb[i]);
  return y.to(type).to(a.device());
}

}  // namespace

Tensor i0e(const Tensor& self) {
  return special_op(kI0eBackward, "special_i0e", self, detail::i0e_scalar,
                    [](const Tensor& x) { return i1e(x) - x.sign() * i0e(x); });
}

Tensor i1e(const Tensor& self) {
  return special_op(kI1eBackward, "special_i1e", self, detail::i1e_scalar, [](const Tensor& x) {
    // i0e(x) - i1e(x) (sgn(x) + 1 / x), and 1/2 at 0.
    Tensor safe = where(x == 0, ones_like(x), x);
    return where(x == 0, full_like(x, 0.5), i0e(x) - i1e(x) * (x.sign() + safe.reciprocal()));
  });
}

Tensor modified_bessel_k0(const Tensor& self) {
  return without_derivative("special_modified_bessel_k0", self,
                            [](double x) { return detail::bessel_k_scaled(0, x) * std::exp(-x); });
}
Tensor modified_bessel_k1(const Tensor& self) {
  return without_derivative("special_modified_bessel_k1", self,
                            [](double x) { return detail::bessel_k_scaled(1, x) * std::exp(-x); });
}
Tensor scaled_modified_bessel_k0(const Tensor& x) {
  return without_derivative("special_scaled_modified_bessel_k0", x,
                            [](double v) { return detail::bessel_k_scaled(0, v); });
}
Tensor scaled_modified_bessel_k1(const Tensor& x) {
  return without_derivative("special_scaled_modified_bessel_k1", x,
                            [](double v) { return detail::bessel_k_scaled(1, v); });
}
Tensor bessel_j0(const Tensor& self) {
  return without_derivative("special_bessel_j0", self, detail::bessel_j0_scalar);
}
Tensor bessel_j1(const Tensor& self) {
  return without_derivative("special_bessel_j1", self, detail::bessel_j1_scalar);
}
Tensor bessel_y0(const Tensor& self) {
  return without_derivative("special_bessel_y0", self, detail::bessel_y0_scalar);
}
Tensor bessel_y1(const Tensor& self) {
  return without_derivative("special_bessel_y1", self, detail::bessel_y1_scalar);
}
Tensor spherical_bessel_j0(const Tensor& x) {
  return without_derivative("special_spherical_bessel_j0", x, [](double v) {
    if (std::isinf(v)) return 0.0;
    return v == 0 ? 1.0 : std::sin(v) / v;
  });
}
Tensor airy_ai(const Tensor& x) {
  return without_derivative("special_airy_ai", x, detail::airy_ai_scalar);
}

Tensor entr(const Tensor& self) {
  return special_op(
      kEntrBackward, "special_entr", self,
      [](double x) {
        if (std::isnan(x)) return x;
        if (x > 0) return -x * std::log(x);
        return x == 0 ? 0.0 : -std::numeric_limits<double>::infinity();
      },
      [](const Tensor& x) { return -(x.log() + 1); });
}

Tensor erfcx(const Tensor& self) {
  return special_op(
      kErfcxBackward, "special_erfcx", self, detail::erfcx_scalar,
      [](const Tensor& x) { return 2 * x * erfcx(x) - 2 / std::sqrt(std::numbers::pi); });
}

Tensor ndtr(const Tensor& self) {
  return special_op(kNdtrBackward, "special_ndtr", self, detail::ndtr_scalar,
                    [](const Tensor& x) { return (x * x * -0.5).exp() / kSqrt2Pi; });
}

Tensor log_ndtr(const Tensor& self) {
  return special_op(kLogNdtrBackward, "special_log_ndtr", self, detail::log_ndtr_scalar,
                    [](const Tensor& x) { return (x * x * -0.5 - log_ndtr(x)).exp() / kSqrt2Pi; });
}

Tensor ndtri(const Tensor& self) {
  return special_op(kNdtriBackward, "special_ndtri", self, detail::ndtri_scalar,
                    [](const Tensor& p) {
                      Tensor x = ndtri(p);
                      return (x * x * 0.5).exp() * kSqrt2Pi;
                    });
}

Tensor xlog1py(const Tensor& self, const Tensor& other) {
  detail::check_defined("special_xlog1py", self);
  detail::check_defined("special_xlog1py", other);
  // NaN in y stays NaN even where x == 0, as in PyTorch.
  return where(self.eq(0).logical_and(other.isnan().logical_not()), zeros_like(self * other),
               self * other.log1p());
}
Tensor xlog1py(const Scalar& self, const Tensor& other) {
  return xlog1py(detail::wrap_number(other, self), other);
}
Tensor xlog1py(const Tensor& self, const Scalar& other) {
  return xlog1py(self, detail::wrap_number(self, other));
}

Tensor zeta(const Tensor& self, const Tensor& other) {
  autograd::Recorder r(kZetaBackward, self, other);
  Tensor y = map_pairs("special_zeta", self, other, detail::hurwitz_zeta_scalar);
  if (r) {
    DimVector q_shape(other.sizes().begin(), other.sizes().end());
    r.save(self, other)
        .finish(y, [q_shape](autograd::FormulaNode& n, const autograd::variable_list& g) {
          BRASA_CHECK(!n.needs(0), "the derivative for 'special_zeta: self' is not implemented.");
          // d/dq zeta(x, q) = -x zeta(x + 1, q).
          Tensor x = n.saved(0), q = n.saved(1);
          return autograd::variable_list{Tensor(),
                                         autograd::sum_to(g[0] * -x * zeta(x + 1, q), q_shape)};
        });
  }
  return y;
}
Tensor zeta(const Scalar& self, const Tensor& other) {
  return zeta(detail::wrap_number(other, self), other);
}
Tensor zeta(const Tensor& self, const Scalar& other) {
  return zeta(self, detail::wrap_number(self, other));
}

namespace {

// The three-term recurrence p_{k+1} = (a_k x + b_k) p_k - c_k p_{k-1} from p0 and p1.
template <class Step>
double recur(int64_t n, double p0, double p1, Step step) {
  if (n == 0) return p0;
  for (int64_t k = 1; k < n; ++k) {
    const double next = step(k, p1, p0);
    p0 = p1;
    p1 = next;
  }
  return p1;
}

// Chebyshev's T, U, V, W: p0 = 1, p1 = 2x - c1 (T: x), p_{k+1} = 2x p_k - p_{k-1}.
double chebyshev(char kind, double x, double nd) {
  if (std::isnan(x) || std::isnan(nd)) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = static_cast<int64_t>(nd);
  if (n < 0) return 0;
  // At x = +-1 the values are exact: T = (+-1)^n, U = (+-1)^n (n + 1), V and W as below.
  if (std::abs(x) == 1) {
    const bool odd = n % 2 == 1;
    switch (kind) {
      case 'T':
        return x > 0 || !odd ? 1.0 : -1.0;
      case 'U':
        return (x > 0 || !odd ? 1.0 : -1.0) * static_cast<double>(n + 1);
      case 'V':
        return x > 0 ? 1.0 : (odd ? -1.0 : 1.0) * static_cast<double>(2 * n + 1);
      default:
        return x > 0 ? static_cast<double>(2 * n + 1) : (odd ? -1.0 : 1.0);
    }
  }
  const double p1 = kind == 'T' ? x : kind == 'U' ? 2 * x : kind == 'V' ? 2 * x - 1 : 2 * x + 1;
  return recur(n, 1.0, p1, [x](int64_t, double p, double q) { return 2 * x * p - q; });
}

double hermite_h(double x, double nd) {
  if (std::isnan(x) || std::isnan(nd)) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = static_cast<int64_t>(nd);
  if (n < 0) return 0;
  return recur(n, 1.0, 2 * x,
               [x](int64_t k, double p, double q) { return 2 * x * p - 2.0 * k * q; });
}

double hermite_he(double x, double nd) {
  if (std::isnan(x) || std::isnan(nd)) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = static_cast<int64_t>(nd);
  if (n < 0) return 0;
  return recur(n, 1.0, x, [x](int64_t k, double p, double q) { return x * p - k * q; });
}

double laguerre_l(double x, double nd) {
  if (std::isnan(x) || std::isnan(nd)) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = static_cast<int64_t>(nd);
  if (n < 0) return 0;
  if (x == 0) return 1;
  return recur(n, 1.0, 1 - x, [x](int64_t k, double p, double q) {
    return ((2.0 * k + 1 - x) * p - k * q) / (k + 1.0);
  });
}

double legendre_p(double x, double nd) {
  if (std::isnan(x) || std::isnan(nd)) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = static_cast<int64_t>(nd);
  if (n < 0) return 0;
  if (std::abs(x) == 1) return x > 0 || n % 2 == 0 ? 1.0 : -1.0;
  return recur(n, 1.0, x, [x](int64_t k, double p, double q) {
    return ((2.0 * k + 1) * x * p - k * q) / (k + 1.0);
  });
}

template <class F>
Tensor polynomial(const char* op, const Tensor& x, const Tensor& n, F f) {
  for (const Tensor& t : {x, n})
    BRASA_CHECK(!t.defined() || !t.requires_grad() || !autograd::GradMode::is_enabled(), op,
                ": the derivative is not implemented (nor in PyTorch); pass detached tensors or ",
                "call it under NoGradGuard");
  return map_pairs(op, x, n, f);
}

}  // namespace

#define BRASA_DEFINE_POLYNOMIAL(name, f)                                                          \
  Tensor name(const Tensor& x, const Tensor& n) { return polynomial("special_" #name, x, n, f); } \
  Tensor name(const Scalar& x, const Tensor& n) { return name(detail::wrap_number(n, x), n); }    \
  Tensor name(const Tensor& x, const Scalar& n) { return name(x, detail::wrap_number(x, n)); }
BRASA_DEFINE_POLYNOMIAL(chebyshev_polynomial_t,
                        [](double x, double n) { return chebyshev('T', x, n); })
BRASA_DEFINE_POLYNOMIAL(chebyshev_polynomial_u,
                        [](double x, double n) { return chebyshev('U', x, n); })
BRASA_DEFINE_POLYNOMIAL(chebyshev_polynomial_v,
                        [](double x, double n) { return chebyshev('V', x, n); })
BRASA_DEFINE_POLYNOMIAL(chebyshev_polynomial_w,
                        [](double x, double n) { return chebyshev('W', x, n); })
BRASA_DEFINE_POLYNOMIAL(shifted_chebyshev_polynomial_t,
                        [](double x, double n) { return chebyshev('T', x + x - 1, n); })
BRASA_DEFINE_POLYNOMIAL(shifted_chebyshev_polynomial_u,
                        [](double x, double n) { return chebyshev('U', x + x - 1, n); })
BRASA_DEFINE_POLYNOMIAL(shifted_chebyshev_polynomial_v,
                        [](double x, double n) { return chebyshev('V', x + x - 1, n); })
BRASA_DEFINE_POLYNOMIAL(shifted_chebyshev_polynomial_w,
                        [](double x, double n) { return chebyshev('W', x + x - 1, n); })
BRASA_DEFINE_POLYNOMIAL(hermite_polynomial_h, hermite_h)
BRASA_DEFINE_POLYNOMIAL(hermite_polynomial_he, hermite_he)
BRASA_DEFINE_POLYNOMIAL(laguerre_polynomial_l, laguerre_l)
BRASA_DEFINE_POLYNOMIAL(legendre_polynomial_p, legendre_p)
#undef BRASA_DEFINE_POLYNOMIAL

}  // namespace brasa::special
