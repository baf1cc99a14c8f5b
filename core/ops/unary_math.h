#pragma once
// The scalar function of each unary op code, in the op's math type M
// (opmath_t of the storage type). Device-neutral: a device's kernel
// instantiates unary_math<op> in its loop (ops/cpu/unary_kernels.cpp).
#include <brasa/ops/kernels/elementwise.h>

#include <cmath>
#include <limits>

namespace brasa {

template <class T>
T erfinv_scalar(T y) {
  if (y <= T(-1))
    return y == T(-1) ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
  if (y >= T(1))
    return y == T(1) ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
  // Giles' single-precision approximation, then Newton steps on erf(x) - y.
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
    x = p * y;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
    x = p * y;
  }
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 2; ++i) x -= (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  return static_cast<T>(x);
}

// For the math ops (neg .. square); predicates and bitwise_not are written
// in the kernels.
template <UnaryOp op, class M>
inline M unary_math(M x) {
  using U = UnaryOp;
  if constexpr (op == U::neg)
    return -x;
  else if constexpr (op == U::abs)
    return x < M(0) ? -x : x;
  else if constexpr (op == U::sign)
    return static_cast<M>((M(0) < x) - (x < M(0)));
  else if constexpr (op == U::exp)
    return std::exp(x);
  else if constexpr (op == U::exp2)
    return std::exp2(x);
  else if constexpr (op == U::expm1)
    return std::expm1(x);
  else if constexpr (op == U::log)
    return std::log(x);
  else if constexpr (op == U::log2)
    return std::log2(x);
  else if constexpr (op == U::log10)
    return std::log10(x);
  else if constexpr (op == U::log1p)
    return std::log1p(x);
  else if constexpr (op == U::sqrt)
    return std::sqrt(x);
  else if constexpr (op == U::rsqrt)
    return M(1) / std::sqrt(x);
  else if constexpr (op == U::reciprocal)
    return M(1) / x;
  else if constexpr (op == U::sin)
    return std::sin(x);
  else if constexpr (op == U::cos)
    return std::cos(x);
  else if constexpr (op == U::tan)
    return std::tan(x);
  else if constexpr (op == U::asin)
    return std::asin(x);
  else if constexpr (op == U::acos)
    return std::acos(x);
  else if constexpr (op == U::atan)
    return std::atan(x);
  else if constexpr (op == U::sinh)
    return std::sinh(x);
  else if constexpr (op == U::cosh)
    return std::cosh(x);
  else if constexpr (op == U::tanh)
    return std::tanh(x);
  else if constexpr (op == U::sigmoid)
    return M(1) / (M(1) + std::exp(-x));
  else if constexpr (op == U::relu)
    return x > M(0) ? x : (x != x ? x : M(0));
  else if constexpr (op == U::erf)
    return std::erf(x);
  else if constexpr (op == U::erfinv)
    return erfinv_scalar<M>(x);
  else if constexpr (op == U::floor)
    return std::floor(x);
  else if constexpr (op == U::ceil)
    return std::ceil(x);
  else if constexpr (op == U::round)
    return std::nearbyint(x);
  else if constexpr (op == U::trunc)
    return std::trunc(x);
  else if constexpr (op == U::frac)
    return x - std::trunc(x);
  else if constexpr (op == U::square)
    return x * x;
  else
    static_assert(op == U::neg, "unary_math: not a math op");
}

}  // namespace brasa
