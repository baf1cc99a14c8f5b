#include <brasa/ops/binary.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/math_extra.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/unary.h>

#include <cmath>
#include <numeric>

namespace brasa {

using detail::check_defined;

namespace {
ScalarType floating_result(const Tensor& a, const Tensor& b) {
  ScalarType t = detail::result_type(a, b);
  return isFloatingType(t) ? t : get_default_dtype();
}
// Both broadcast, made contiguous on the CPU in type T; f(a, b) per element
// into a CPU tensor of dtype `out`, then moved to a's device.
template <class T, class R, class F>
Tensor map_pair(const char* op, const Tensor& a, const Tensor& b, ScalarType in, ScalarType out,
                F f) {
  check_defined(op, a);
  check_defined(op, b);
  BRASA_CHECK(a.device() == b.device() || b.dim() == 0, op,
              ": expected both tensors on one device, got ", a.device(), " and ", b.device());
  auto pair = broadcast_tensors({a.detach(), b.detach().to(a.device())});
  Tensor x = pair[0].to(kCPU).to(in).contiguous(), y = pair[1].to(kCPU).to(in).contiguous();
  Tensor r = empty(x.sizes(), TensorOptions().dtype(out));
  const T *px = x.data_ptr<T>(), *py = y.data_ptr<T>();
  R* pr = r.data_ptr<R>();
  for (int64_t i = 0; i < x.numel(); ++i) pr[i] = f(px[i], py[i]);
  return r.to(a.device());
}
Tensor nan_ignoring(const char* op, const Tensor& self, const Tensor& other, bool larger) {
  check_defined(op, self);
  check_defined(op, other);
  Tensor picked = larger ? maximum(self, other) : minimum(self, other);
  if (!isFloatingType(picked.scalar_type())) return picked;
  return where(isnan(self), other.to(picked.scalar_type()),
               where(isnan(other), self.to(picked.scalar_type()), picked));
}
}  // namespace

Tensor copysign(const Tensor& self, const Tensor& other) {
  check_defined("copysign", self);
  check_defined("copysign", other);
  const ScalarType t = floating_result(self, other);
  Tensor negative = signbit(other);
  Tensor magnitude = self.to(t).abs();
  return where(negative, -magnitude, magnitude);
}
Tensor copysign(const Tensor& self, const Scalar& other) {
  check_defined("copysign", self);
  return copysign(self,
                  scalar_tensor(other, TensorOptions().dtype(kDouble).device(self.device()))
                      .to(self.is_floating_point() ? self.scalar_type() : get_default_dtype()));
}

Tensor fmax(const Tensor& self, const Tensor& other) {
  return nan_ignoring("fmax", self, other, true);
}
Tensor fmin(const Tensor& self, const Tensor& other) {
  return nan_ignoring("fmin", self, other, false);
}

Tensor heaviside(const Tensor& self, const Tensor& values) {
  check_defined("heaviside", self);
  check_defined("heaviside", values);
  BRASA_CHECK(self.scalar_type() == values.scalar_type(),
              "heaviside is not yet implemented for tensors with different dtypes, got ",
              self.scalar_type(), " and ", values.scalar_type());
  BRASA_CHECK(!self.requires_grad() && !values.requires_grad(),
              "heaviside: the derivative is not implemented");
  Tensor step = (self > 0).to(self.scalar_type());
  return where(self == 0, values, step);
}

Tensor signbit(const Tensor& self) {
  check_defined("signbit", self);
  if (!self.is_floating_point()) return self < 0;
  return map_pair<double, bool>("signbit", self, self, kDouble, kBool,
                                [](double x, double) { return std::signbit(x); });
}
Tensor isposinf(const Tensor& self) {
  check_defined("isposinf", self);
  return isinf(self).logical_and(self > 0);
}
Tensor isneginf(const Tensor& self) {
  check_defined("isneginf", self);
  return isinf(self).logical_and(self < 0);
}

Tensor float_power(const Tensor& self, const Tensor& exponent) {
  check_defined("float_power", self);
  check_defined("float_power", exponent);
  return pow(self.to(kDouble), exponent.to(kDouble));
}
Tensor float_power(const Tensor& self, const Scalar& exponent) {
  check_defined("float_power", self);
  return pow(self.to(kDouble), exponent.to<double>());
}
Tensor float_power(const Scalar& self, const Tensor& exponent) {
  check_defined("float_power", exponent);
  return pow(full_like(exponent, self, TensorOptions().dtype(kDouble)), exponent.to(kDouble));
}

Tensor ldexp(const Tensor& self, const Tensor& other) {
  check_defined("ldexp", self);
  check_defined("ldexp", other);
  const ScalarType t = floating_result(self, other);
  return self.to(t) * pow(full_like(other, 2.0, TensorOptions().dtype(t)), other.to(t));
}

// The integer op f over both (computed in int64), in their promoted dtype.
template <class F>
Tensor integer_pair(const char* op, const Tensor& self, const Tensor& other, F f) {
  BRASA_CHECK(self.defined() && other.defined() && isIntegralType(self.scalar_type(), false) &&
                  isIntegralType(other.scalar_type(), false),
              op, ": expected integer tensors, got ",
              self.defined() ? self.scalar_type() : ScalarType::Undefined, " and ",
              other.defined() ? other.scalar_type() : ScalarType::Undefined);
  const ScalarType t = promoteTypes(self.scalar_type(), other.scalar_type());
  return map_pair<int64_t, int64_t>(op, self, other, kLong, kLong, f).to(t);
}

Tensor gcd(const Tensor& self, const Tensor& other) {
  return integer_pair("gcd", self, other, [](int64_t a, int64_t b) { return std::gcd(a, b); });
}
Tensor lcm(const Tensor& self, const Tensor& other) {
  return integer_pair("lcm", self, other, [](int64_t a, int64_t b) {
    const int64_t g = std::gcd(a, b);
    return g == 0 ? 0 : std::abs(a / g * b);
  });
}

namespace {
// Shifts computed in int64 and wrapped to the promoted dtype's width.
Tensor shift(const char* op, const Tensor& self, const Tensor& other, bool left) {
  return integer_pair(op, self, other, [left](int64_t a, int64_t b) -> int64_t {
    if (b < 0 || b >= 64) return left || a >= 0 ? 0 : -1;
    return left ? static_cast<int64_t>(static_cast<uint64_t>(a) << b) : a >> b;
  });
}
Tensor as_tensor_like(const Scalar& s, const Tensor& like) {
  return scalar_tensor(s, TensorOptions().dtype(kLong).device(like.device()));
}
}  // namespace

Tensor bitwise_left_shift(const Tensor& self, const Tensor& other) {
  return shift("bitwise_left_shift", self, other, true);
}
Tensor bitwise_left_shift(const Tensor& self, const Scalar& other) {
  return bitwise_left_shift(self, as_tensor_like(other, self).to(self.scalar_type()));
}
Tensor bitwise_left_shift(const Scalar& self, const Tensor& other) {
  return bitwise_left_shift(as_tensor_like(self, other).to(other.scalar_type()), other);
}
Tensor bitwise_right_shift(const Tensor& self, const Tensor& other) {
  return shift("bitwise_right_shift", self, other, false);
}
Tensor bitwise_right_shift(const Tensor& self, const Scalar& other) {
  return bitwise_right_shift(self, as_tensor_like(other, self).to(self.scalar_type()));
}
Tensor bitwise_right_shift(const Scalar& self, const Tensor& other) {
  return bitwise_right_shift(as_tensor_like(self, other).to(other.scalar_type()), other);
}

Tensor nextafter(const Tensor& self, const Tensor& other) {
  check_defined("nextafter", self);
  check_defined("nextafter", other);
  const ScalarType t = self.scalar_type();
  BRASA_CHECK((t == kFloat || t == kDouble) && other.scalar_type() == t,
              "nextafter: expected two float32 or two float64 tensors, got ", t, " and ",
              other.scalar_type());
  if (t == kFloat)
    return map_pair<float, float>("nextafter", self, other, kFloat, kFloat,
                                  [](float a, float b) { return std::nextafter(a, b); });
  return map_pair<double, double>("nextafter", self, other, kDouble, kDouble,
                                  [](double a, double b) { return std::nextafter(a, b); });
}

std::tuple<Tensor, Tensor> frexp(const Tensor& self) {
  check_defined("frexp", self);
  BRASA_CHECK(self.is_floating_point(), "torch.frexp() only supports floating-point dtypes, got ",
              self.scalar_type());
  Tensor exponent =
      map_pair<double, int32_t>("frexp", self, self, kDouble, kInt, [](double x, double) {
        int e = 0;
        std::frexp(x, &e);
        return static_cast<int32_t>(e);
      });
  Tensor mantissa =
      map_pair<double, double>("frexp", self, self, kDouble, kDouble, [](double x, double) {
        int e = 0;
        return std::frexp(x, &e);
      }).to(self.scalar_type());
  return {mantissa, exponent};
}

}  // namespace brasa
