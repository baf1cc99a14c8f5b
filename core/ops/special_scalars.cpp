#include <brasa/ops/special.h>
#include <brasa/ops/special_scalars.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

namespace brasa::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;
constexpr double kEulerGamma = std::numbers::egamma;

// exp(x^2) without the rounding error of x^2: x^2 = hi + lo exactly (fma),
// and exp(lo) = 1 + lo to double precision.
double exp_of_square(double x) {
  const double hi = x * x, lo = std::fma(x, x, -hi);
  return std::exp(hi) * (1 + lo);
}

// sum_k (-1)^k a_k(nu) / x^k (alternate) or sum_k a_k(nu) / x^k, with
// a_k(nu) = prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (k! 8^k): the asymptotic
// series of exp(-x) I_nu(x) sqrt(2 pi x) (alternating) and of
// exp(x) K_nu(x) sqrt(2 x / pi). Summed while the terms shrink; for x >= 25
// the smallest term is below 1e-20.
double bessel_asymptotic_sum(double nu, double x, bool alternate) {
  const double mu = 4 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 200; ++k) {
    const double next = term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
    const double signed_next = alternate ? -next : next;
    if (std::abs(signed_next) >= std::abs(term)) break;
    term = signed_next;
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  return sum;
}

// Hankel's expansion for |x| >= 25: J_nu(x) = sqrt(2 / (pi x)) (P cos chi - Q sin chi),
// Y_nu(x) = sqrt(2 / (pi x)) (P sin chi + Q cos chi), chi = x - (nu / 2 + 1/4) pi.
// Returns {J, Y}; cos chi and sin chi come from cos x and sin x, so no
// rounding of x - phase enters.
std::pair<double, double> hankel_j_y(int nu, double x) {
  const double mu = 4.0 * nu * nu;
  double P = 0, Q = 0, term = 1;
  for (int k = 0; k < 200; ++k) {
    if (k > 0) {
      const double next = term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
      if (std::abs(next) >= std::abs(term) && k > 2) break;
      term = next;
    }
    // term_k enters P (even k) or Q (odd k) with sign (-1)^floor(k / 2).
    const double signed_term = (k / 2) % 2 ? -term : term;
    (k % 2 ? Q : P) += signed_term;
    if (k > 2 && std::abs(term) < 1e-17) break;
  }
  const double c = std::cos(x), s = std::sin(x), r = std::numbers::sqrt2 / 2;
  // chi = x - pi/4 (nu = 0) or x - 3 pi/4 (nu = 1).
  const double cos_chi = nu == 0 ? (c + s) * r : (s - c) * r;
  const double sin_chi = nu == 0 ? (s - c) * r : -(s + c) * r;
  const double scale = std::sqrt(2 / (kPi * x));
  return {scale * (P * cos_chi - Q * sin_chi), scale * (P * sin_chi + Q * cos_chi)};
}

// J_{nu + k}(x) for k = 0..count-1, 0 < x <= 30, by Miller's backward
// recurrence J_{m-1} = (2m / x) J_m - J_{m+1} from far above the last
// order wanted, normalized by (x/2)^nu = sum_k (nu + 2k) Gamma(nu + k) / k! J_{nu + 2k}.
std::vector<double> bessel_j_sequence(double nu, double x, int count) {
  const int top = 2 * static_cast<int>((x + count + 60) / 2);
  std::vector<double> J(top + 2, 0.0);
  J[top + 1] = 0;
  J[top] = 1e-300;
  for (int k = top; k >= 1; --k) {
    J[k - 1] = 2 * (nu + k) / x * J[k] - J[k + 1];
    if (std::abs(J[k - 1]) > 1e250)  // rescale what was computed so far
      for (int i = k - 1; i <= top; ++i) J[i] *= 1e-250;
  }
  // c = Gamma(nu + k) / k!; for nu = 0 the k = 0 term is J_0 itself (the
  // limit of nu Gamma(nu)) and c = 1 / k after it.
  double norm = nu == 0 ? J[0] : nu * std::tgamma(nu) * J[0], c = nu == 0 ? 1 : std::tgamma(nu);
  for (int k = 1; 2 * k <= top; ++k) {
    c = nu == 0 ? 1.0 / k : c * (nu + k - 1) / k;
    norm += (nu + 2 * k) * c * J[2 * k];
  }
  const double scale = std::pow(x / 2, nu) / norm;
  J.resize(count);
  for (double& v : J) v *= scale;
  return J;
}

// exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt by the
// trapezoidal rule: the integrand is analytic in a strip about the real
// axis and decays doubly exponentially, so the rule's error falls like
// exp(-2 pi d / h) (d the strip's half-width used); with d = 1 and x <= 30
// it is below 1e-20 at h = 0.1.
double bessel_k_scaled_trapezoid(double nu, double x) {
  const double h = 0.1;
  double sum = 0.5;  // the t = 0 term, halved
  for (int k = 1; k < 20000; ++k) {
    const double t = k * h;
    const double f = std::exp(-x * (std::cosh(t) - 1)) * std::cosh(nu * t);
    sum += f;
    if (f < 1e-18 * sum) break;
  }
  return h * sum;
}

// Hurwitz zeta(s, q) by a direct sum up to q + N, then the Euler-Maclaurin tail.
double hurwitz_zeta_sum(double s, double q) {
  int64_t N = 12 + (q < 0 ? static_cast<int64_t>(std::ceil(-q)) : 0);
  if (s > 20) N += static_cast<int64_t>(s);  // keeps the tail's series convergent
  double sum = 0;
  for (int64_t k = 0; k < N; ++k) sum += std::pow(q + k, -s);
  const double a = q + N;
  sum += std::pow(a, 1 - s) / (s - 1) + 0.5 * std::pow(a, -s);
  // B_2j / (2j)! for j = 1..7.
  static const double kB[] = {1.0 / 12,         -1.0 / 720,     1.0 / 30240,
                              -1.0 / 1209600,   1.0 / 47900160, -691.0 / 1307674368000,
                              1.0 / 74724249600};
  double rising = s;                   // s (s + 1) ... (s + 2j - 2)
  double power = std::pow(a, -s - 1);  // a^(-s - 2j + 1)
  for (int j = 0; j < 7; ++j) {
    sum += kB[j] * rising * power;
    rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
    power /= a * a;
  }
  return sum;
}

}  // namespace

double erfcx_scalar(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return x < -26.7 ? kInf : 2 * exp_of_square(x) - erfcx_scalar(-x);
  if (x < 26) return exp_of_square(x) * std::erfc(x);
  if (x > 1e9) return 1 / (x * std::sqrt(kPi));
  // Past erfc's underflow: the continued fraction
  // sqrt(pi) erfcx(x) = 1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))),
  // which converges in a few terms here, evaluated from the bottom.
  double tail = x;
  for (int k = 40; k >= 1; --k) tail = x + (k / 2.0) / tail;
  return 1 / (std::sqrt(kPi) * tail);
}

double ndtr_scalar(double x) {
  const double t = x * std::numbers::sqrt2 / 2;
  if (std::abs(t) < std::numbers::sqrt2 / 2) return 0.5 + 0.5 * std::erf(t);
  const double tail = 0.5 * std::erfc(std::abs(t));
  return t > 0 ? 1 - tail : tail;
}

double log_ndtr_scalar(double x) {
  const double t = x * std::numbers::sqrt2 / 2;
  // Left of -1 the CDF is erfcx(-t) exp(-t^2) / 2: its log has no underflow.
  if (x < -1) return std::log(erfcx_scalar(-t) / 2) - t * t;
  return std::log1p(-std::erfc(t) / 2);
}

double ndtri_scalar(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0;
  if (p > 0.5) return -ndtri_scalar(1 - p);  // 1 - p is exact for p in [0.5, 1]
  // A rational first guess (error below 5e-4), then Newton's method on
  // log ndtr(x) = log p, which keeps relative precision deep in the tail.
  const double t = std::sqrt(-2 * std::log(p));
  double x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                       (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t));
  const double log_p = std::log(p);
  for (int i = 0; i < 6; ++i) {
    const double log_cdf = log_ndtr_scalar(x);
    const double log_pdf = -0.5 * x * x - 0.5 * std::log(2 * kPi);
    const double step = (log_cdf - log_p) * std::exp(log_cdf - log_pdf);
    x -= step;
    if (std::abs(step) < 1e-16 * std::max(1.0, std::abs(x))) break;
  }
  return x;
}

double i0e_scalar(double x) {
  const double a = std::abs(x);
  if (std::isnan(a)) return a;
  if (a <= 30) return i0_scalar(a) * std::exp(-a);
  return bessel_asymptotic_sum(0, a, true) / std::sqrt(2 * kPi * a);
}

double i1e_scalar(double x) {
  const double a = std::abs(x);
  if (std::isnan(a)) return a;
  const double v = a <= 30 ? i1_scalar(a) * std::exp(-a)
                           : bessel_asymptotic_sum(1, a, true) / std::sqrt(2 * kPi * a);
  return x < 0 ? -v : v;
}

double bessel_k_scaled(double nu, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0;
  if (x > 30) return bessel_asymptotic_sum(nu, x, false) * std::sqrt(kPi / (2 * x));
  // Below 1e-8 the series' first terms (times e^x = 1 + x) are exact to
  // double precision, where the integrand's range would overflow cosh:
  // K0 = -(log(x/2) + gamma), K1 = 1/x + (x/2)(log(x/2) + gamma - 1/2).
  if (x < 1e-8 && nu == 0) return -(std::log(x / 2) + kEulerGamma) * (1 + x);
  if (x < 1e-8 && nu == 1) return (1 / x + x / 2 * (std::log(x / 2) + kEulerGamma - 0.5)) * (1 + x);
  return bessel_k_scaled_trapezoid(nu, x);
}

double bessel_j0_scalar(double x) {
  const double a = std::abs(x);
  if (std::isnan(a)) return a;
  if (std::isinf(a)) return 0;
  if (a > 25) return hankel_j_y(0, a).first;
  if (a < 1e-8) return 1 - a * a / 4;
  return bessel_j_sequence(0, a, 1)[0];
}

double bessel_j1_scalar(double x) {
  const double a = std::abs(x);
  if (std::isnan(a)) return a;
  if (std::isinf(a)) return 0;
  double v;
  if (a > 25)
    v = hankel_j_y(1, a).first;
  else if (a < 1e-8)
    v = a / 2;
  else
    v = bessel_j_sequence(0, a, 2)[1];
  return x < 0 ? -v : v;
}

// Neumann's series from the J_k of Miller's recurrence:
// Y0(x) = (2/pi) (log(x/2) + gamma) J0(x) - (4/pi) sum_k (-1)^k J_2k(x) / k, and
// Y1 = -Y0' = -(2/pi) (J0 / x - (log(x/2) + gamma) J1) + (2/pi) sum_k (-1)^k (J_2k-1 - J_2k+1) / k.
double bessel_y0_scalar(double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (std::isinf(x)) return 0;
  if (x > 25) return hankel_j_y(0, x).second;
  // Below 1e-8 the series' first terms are exact to double precision (and
  // the recurrence would overflow): Y0 = (2/pi) (log(x/2) + gamma) + O(x^2 log x).
  if (x < 1e-8) return 2 / kPi * (std::log(x / 2) + kEulerGamma);
  const int count = static_cast<int>(x) + 40;
  std::vector<double> J = bessel_j_sequence(0, x, count);
  double sum = 0;
  for (int k = 1; 2 * k < count; ++k) sum += (k % 2 ? -1.0 : 1.0) * J[2 * k] / k;
  return 2 / kPi * (std::log(x / 2) + kEulerGamma) * J[0] - 4 / kPi * sum;
}

double bessel_y1_scalar(double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (std::isinf(x)) return 0;
  if (x > 25) return hankel_j_y(1, x).second;
  // Y1 = -2 / (pi x) + (x / pi) (log(x/2) + gamma - 1/2) + O(x^3 log x).
  if (x < 1e-8) return -2 / (kPi * x) + x / kPi * (std::log(x / 2) + kEulerGamma - 0.5);
  const int count = static_cast<int>(x) + 40;
  std::vector<double> J = bessel_j_sequence(0, x, count);
  double sum = 0;
  for (int k = 1; 2 * k + 1 < count; ++k)
    sum += (k % 2 ? -1.0 : 1.0) * (J[2 * k - 1] - J[2 * k + 1]) / k;
  return -2 / kPi * (J[0] / x - (std::log(x / 2) + kEulerGamma) * J[1]) + 2 / kPi * sum;
}

double airy_ai_scalar(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0;
  // Ai(0) = 1 / (3^(2/3) Gamma(2/3)).
  // Near 0 the Maclaurin series Ai(0) + Ai'(0) x + Ai(0) x^3 / 6, with
  // Ai(0) = 1 / (3^(2/3) Gamma(2/3)) and Ai'(0) = -1 / (3^(1/3) Gamma(1/3)).
  if (std::abs(x) < 1e-5) {
    const double ai0 = 1 / (std::cbrt(9.0) * std::tgamma(2.0 / 3));
    const double ai1 = -1 / (std::cbrt(3.0) * std::tgamma(1.0 / 3));
    return ai0 + ai1 * x + ai0 * x * x * x / 6;
  }
  const double z = std::abs(x), zeta = 2.0 / 3 * z * std::sqrt(z);
  if (x > 0) {
    // Ai(x) = sqrt(x / 3) K_1/3(zeta) / pi.
    if (zeta > 750) return 0;
    return std::sqrt(z / 3) / kPi * bessel_k_scaled(1.0 / 3, zeta) * std::exp(-zeta);
  }
  // Ai(-z) = sqrt(z) (J_1/3(zeta) + J_-1/3(zeta)) / 3.
  if (zeta <= 25) {
    const double j_plus = bessel_j_sequence(1.0 / 3, zeta, 1)[0];
    const double j_minus = bessel_j_sequence(-1.0 / 3, zeta, 1)[0];
    return std::sqrt(z) * (j_plus + j_minus) / 3;
  }
  // Beyond: the asymptotic form Ai(-z) = (sin(zeta + pi/4) P - cos(zeta + pi/4) Q) / (sqrt(pi)
  // z^1/4), with u_k = (2k + 1)(2k + 3)...(6k - 1) / (216^k k!) and P = sum (-1)^k u_2k zeta^-2k,
  // Q = sum (-1)^k u_2k+1 zeta^-2k-1.
  double P = 0, Q = 0, u = 1, power = 1;
  for (int k = 0; k < 60; ++k) {
    if (k > 0) {
      // u_k / u_{k-1} = (6k - 5)(6k - 3)(6k - 1) / (216 k (2k - 1))
      u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / (216.0 * k * (2.0 * k - 1));
      power /= zeta;
    }
    const double term = u * power * ((k / 2) % 2 ? -1.0 : 1.0);
    (k % 2 ? Q : P) += term;
    if (std::abs(u * power) < 1e-17) break;
  }
  const double phase = zeta + kPi / 4;
  return (std::sin(phase) * P - std::cos(phase) * Q) / (std::sqrt(kPi) * std::sqrt(std::sqrt(z)));
}

double hurwitz_zeta_scalar(double s, double q) {
  if (std::isnan(s) || std::isnan(q)) return kNaN;
  if (s == 1) return kInf;
  if (s < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (s != std::floor(s)) return kNaN;  // a negative base to a fractional power
  }
  return hurwitz_zeta_sum(s, q);
}

}  // namespace brasa::detail
