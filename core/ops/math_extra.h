#pragma once
// libtorch's remaining elementwise functions: copysign, fmax/fmin (NaN-
// ignoring), heaviside, signbit, isposinf/isneginf, float_power, ldexp,
// gcd/lcm, nextafter and frexp.
#include <brasa/tensor/tensor.h>

#include <tuple>

namespace brasa {

// |self| with the sign (bit) of other; a floating result.
Tensor copysign(const Tensor& self, const Tensor& other);
Tensor copysign(const Tensor& self, const Scalar& other);
// The larger (smaller) of the two; where one is NaN, the other.
Tensor fmax(const Tensor& self, const Tensor& other);
Tensor fmin(const Tensor& self, const Tensor& other);
// 0 below zero, 1 above, `values` at zero (not differentiable).
Tensor heaviside(const Tensor& self, const Tensor& values);
Tensor signbit(const Tensor& self);  // true where the sign bit is set (-0.0 included)
Tensor isposinf(const Tensor& self);
Tensor isneginf(const Tensor& self);
// pow in double precision.
Tensor float_power(const Tensor& self, const Tensor& exponent);
Tensor float_power(const Tensor& self, const Scalar& exponent);
Tensor float_power(const Scalar& self, const Tensor& exponent);
// self * 2^other, a floating result.
Tensor ldexp(const Tensor& self, const Tensor& other);
// Greatest common divisor and least common multiple of integer tensors.
Tensor gcd(const Tensor& self, const Tensor& other);
Tensor lcm(const Tensor& self, const Tensor& other);
// The next representable value after self towards other (in self's dtype).
Tensor nextafter(const Tensor& self, const Tensor& other);
// Bit shifts of integer tensors: shifting by the width or more gives 0
// (left) or the sign (right); the right shift is arithmetic.
Tensor bitwise_left_shift(const Tensor& self, const Tensor& other);
Tensor bitwise_left_shift(const Tensor& self, const Scalar& other);
Tensor bitwise_left_shift(const Scalar& self, const Tensor& other);
Tensor bitwise_right_shift(const Tensor& self, const Tensor& other);
Tensor bitwise_right_shift(const Tensor& self, const Scalar& other);
Tensor bitwise_right_shift(const Scalar& self, const Tensor& other);
// self = mantissa * 2^exponent with |mantissa| in [0.5, 1); exponent int32.
std::tuple<Tensor, Tensor> frexp(const Tensor& self);

}  // namespace brasa
