#include <brasa/autograd/record.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/special.h>
#include <brasa/ops/special_map.h>
#include <brasa/ops/special_scalars.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <limits>
#include <numbers>

namespace brasa {

namespace detail {

double digamma_scalar(double x) {
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x < 0) {
    if (x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    // Reflection: psi(x) = psi(1 - x) - pi / tan(pi x).
    return digamma_scalar(1 - x) - std::numbers::pi / std::tan(std::numbers::pi * x);
  }
  double shift = 0;  // psi(x) = psi(x + 1) - 1 / x, until the asymptotic series is accurate
  while (x < 10) {
    shift -= 1 / x;
    x += 1;
  }
  const double r = 1 / (x * x);
  const double series =
      r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132)))));
  return shift + std::log(x) - 0.5 / x - series;
}

double polygamma_scalar(int64_t n, double x) {
  if (n == 0) return digamma_scalar(x);
  // psi^(n)(x) = (-1)^(n + 1) n! zeta(n + 1, x)
  const double factorial = std::tgamma(static_cast<double>(n) + 1);
  return (n % 2 ? 1.0 : -1.0) * factorial * hurwitz_zeta_scalar(static_cast<double>(n + 1), x);
}

// Power series sum_k (x/2)^(2k + nu) / (k! (k + nu)!): every term has one
// sign, so the sum keeps full relative precision.
static double bessel_i_series(double x, int nu) {
  const double q = x * x / 4;
  double term = nu == 0 ? 1.0 : x / 2, sum = term;
  for (int k = 1; k < 1000; ++k) {
    term *= q / (static_cast<double>(k) * (k + nu));
    sum += term;
    if (std::abs(term) < std::abs(sum) * 1e-17) break;
  }
  return sum;
}
double i0_scalar(double x) { return std::isinf(x) ? INFINITY : bessel_i_series(x, 0); }
double i1_scalar(double x) { return std::isinf(x) ? x : bessel_i_series(x, 1); }

// P(a, x) by its power series: e^-x x^a / Gamma(a + 1) * sum x^n / ((a + 1)...(a + n)).
static double lower_gamma_series(double a, double x) {
  double term = 1, sum = 1;
  for (int n = 1; n < 100000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::abs(term) < std::abs(sum) * 1e-17) break;
  }
  return std::exp(a * std::log(x) - x - std::lgamma(a + 1)) * sum;
}

// Q(a, x) by its continued fraction (evaluated with the modified Lentz
// method), which converges fast for x >= a + 1.
static double upper_gamma_fraction(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < 1e-16) break;
  }
  return std::exp(a * std::log(x) - x - std::lgamma(a)) * h;
}

double igamma_scalar(double a, double x, bool upper) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // PyTorch's boundary values.
  if (std::isnan(a) || std::isnan(x) || x < 0 || a < 0) return nan;
  if (a == 0) return x > 0 ? (upper ? 0.0 : 1.0) : nan;
  if (x == 0) return upper ? 1.0 : 0.0;
  if (std::isinf(a)) return std::isinf(x) ? nan : (upper ? 1.0 : 0.0);
  if (std::isinf(x)) return upper ? 0.0 : 1.0;
  if (x < a + 1) {
    const double p = lower_gamma_series(a, x);
    return upper ? 1 - p : p;
  }
  const double q = upper_gamma_fraction(a, x);
  return upper ? q : 1 - q;
}

}  // namespace detail

using detail::special_op;

namespace {

const autograd::BackwardName kErfcBackward("ErfcBackward0");
const autograd::BackwardName kLgammaBackward("LgammaBackward0");
const autograd::BackwardName kDigammaBackward("DigammaBackward0");
const autograd::BackwardName kPolygammaBackward("PolygammaBackward0");
const autograd::BackwardName kI0Backward("I0Backward0");
const autograd::BackwardName kI1Backward("SpecialI1Backward0");

Tensor bessel_i1(const Tensor& self) {
  return special_op(kI1Backward, "i1", self, detail::i1_scalar, [](const Tensor& x) {
    // i1'(x) = i0(x) - i1(x) / x, and 1/2 at 0.
    Tensor safe = where(x == 0, ones_like(x), x);
    return where(x == 0, full_like(x, 0.5), i0(x) - bessel_i1(x) / safe);
  });
}

}  // namespace

Tensor erfc(const Tensor& self) {
  return special_op(
      kErfcBackward, "erfc", self, [](double x) { return std::erfc(x); },
      [](const Tensor& x) { return exp(-(x * x)) * (-2 / std::sqrt(std::numbers::pi)); });
}
Tensor lgamma(const Tensor& self) {
  return special_op(
      kLgammaBackward, "lgamma", self, [](double x) { return std::lgamma(x); },
      [](const Tensor& x) { return digamma(x); });
}
Tensor digamma(const Tensor& self) {
  return special_op(kDigammaBackward, "digamma", self, detail::digamma_scalar,
                    [](const Tensor& x) { return polygamma(1, x); });
}
Tensor polygamma(int64_t n, const Tensor& self) {
  BRASA_CHECK(n >= 0, "polygamma(n, x) does not support negative n, got n = ", n);
  if (n == 0) return digamma(self);
  return special_op(
      kPolygammaBackward, "polygamma", self,
      [n](double x) { return detail::polygamma_scalar(n, x); },
      [n](const Tensor& x) { return polygamma(n + 1, x); });
}
Tensor mvlgamma(const Tensor& self, int64_t p) {
  BRASA_CHECK(self.defined(), "mvlgamma: expected a defined tensor");
  BRASA_CHECK(p >= 1, "p has to be greater than or equal to 1, got ", p);
  BRASA_CHECK(self.numel() == 0 || (self > (p - 1) / 2.0).all().item<bool>(),
              "All elements must be greater than (p-1)/2 = ", (p - 1) / 2.0);
  Tensor x = self.is_floating_point() ? self : self.to(kFloat);
  Tensor sum = lgamma(x);
  for (int64_t i = 1; i < p; ++i) sum = sum + lgamma(x - i / 2.0);
  return sum + p * (p - 1) / 4.0 * std::log(std::numbers::pi);
}
namespace {
const autograd::BackwardName kIgammaBackward("IgammaBackward0");
const autograd::BackwardName kIgammacBackward("IgammacBackward0");

Tensor incomplete_gamma(const autograd::BackwardName& name, const char* op, const Tensor& a,
                        const Tensor& x, bool upper) {
  BRASA_CHECK(a.defined() && x.defined(), op, ": expected defined tensors");
  BRASA_CHECK(a.device() == x.device(), op, ": expected both tensors on one device, got ",
              a.device(), " and ", x.device());
  const ScalarType type = detail::result_type(a, x);
  BRASA_CHECK(type == kFloat || type == kDouble || type == kHalf || type == kBFloat16, op,
              ": not implemented for dtype ", type, " (expected floating-point inputs, got ",
              a.scalar_type(), " and ", x.scalar_type(), ")");
  const DimVector shape = detail::broadcast_shapes(op, a.sizes(), x.sizes());
  autograd::Recorder r(name, a, x);
  Tensor av = a.detach().to(kCPU).to(kDouble).expand(shape).contiguous();
  Tensor xv = x.detach().to(kCPU).to(kDouble).expand(shape).contiguous();
  Tensor y = empty(shape, TensorOptions().dtype(kDouble));
  for (int64_t i = 0; i < y.numel(); ++i)
    y.data_ptr<double>()[i] =
        detail::igamma_scalar(av.data_ptr<double>()[i], xv.data_ptr<double>()[i], upper);
  y = y.to(type).to(a.device());
  if (r) {
    DimVector x_shape(x.sizes().begin(), x.sizes().end());
    r.save(a, x).finish(
        y, [op, upper, x_shape](autograd::FormulaNode& n, const autograd::variable_list& g) {
          BRASA_CHECK(!n.needs(0), "the derivative for '", op, ": input' is not implemented.");
          Tensor av = n.saved(0), xv = n.saved(1);
          // d/dx P(a, x) = x^(a - 1) e^-x / Gamma(a); Q's is its negative.
          Tensor density = exp((av - 1) * log(xv) - xv - lgamma(av));
          return autograd::variable_list{
              Tensor(), autograd::sum_to(upper ? -(g[0] * density) : g[0] * density, x_shape)};
        });
  }
  return y;
}
}  // namespace

Tensor igamma(const Tensor& self, const Tensor& other) {
  return incomplete_gamma(kIgammaBackward, "igamma", self, other, false);
}
Tensor igammac(const Tensor& self, const Tensor& other) {
  return incomplete_gamma(kIgammacBackward, "igammac", self, other, true);
}

Tensor i0(const Tensor& self) {
  return special_op(kI0Backward, "i0", self, detail::i0_scalar,
                    [](const Tensor& x) { return bessel_i1(x); });
}

namespace special {
Tensor i1(const Tensor& self) { return bessel_i1(self); }
}  // namespace special

}  // namespace brasa
