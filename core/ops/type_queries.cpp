#include <brasa/ops/complex.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/type_queries.h>
#include <brasa/ops/unary.h>

namespace brasa {

using detail::check_defined;

bool is_floating_point(const Tensor& self) {
  check_defined("is_floating_point", self);
  return self.is_floating_point();
}
bool is_complex(const Tensor& self) {
  check_defined("is_complex", self);
  return self.is_complex();
}
bool is_signed(const Tensor& self) {
  check_defined("is_signed", self);
  return self.scalar_type() != kByte && self.scalar_type() != kBool;
}
bool is_nonzero(const Tensor& self) {
  check_defined("is_nonzero", self);
  return self.is_nonzero();
}
bool is_same_size(const Tensor& self, const Tensor& other) {
  check_defined("is_same_size", self);
  check_defined("is_same_size", other);
  return self.sizes() == other.sizes();
}
bool is_conj(const Tensor& self) {
  check_defined("is_conj", self);
  return false;
}
bool is_neg(const Tensor& self) {
  check_defined("is_neg", self);
  return false;
}
bool is_inference(const Tensor& self) {
  check_defined("is_inference", self);
  return false;
}
bool is_distributed(const Tensor& self) {
  check_defined("is_distributed", self);
  return false;
}
bool can_cast(ScalarType from, ScalarType to) { return detail::can_cast(from, to); }
ScalarType promote_types(ScalarType a, ScalarType b) { return promoteTypes(a, b); }
ScalarType result_type(const Tensor& a, const Tensor& b) { return detail::result_type(a, b); }
ScalarType result_type(const Tensor& a, const Scalar& b) { return detail::result_type(a, b); }

Tensor isreal(const Tensor& self) {
  check_defined("isreal", self);
  if (self.is_complex()) return imag(self) == 0;
  return ones_like(self, TensorOptions().dtype(kBool));
}
Tensor real(const Tensor& self) {
  check_defined("real", self);
  if (self.is_complex()) return select(view_as_real(self), -1, 0);
  return self;
}
Tensor conj(const Tensor& self) {
  check_defined("conj", self);
  // A new tensor, not PyTorch's lazy conjugate view: writes to it do not
  // reach self.
  if (self.is_complex()) return detail::complex_conj(self);
  return self;
}
Tensor conj_physical(const Tensor& self) {
  check_defined("conj_physical", self);
  if (self.is_complex()) return detail::complex_conj(self);
  return self;
}
Tensor resolve_conj(const Tensor& self) {
  check_defined("resolve_conj", self);
  return self;
}
Tensor resolve_neg(const Tensor& self) {
  check_defined("resolve_neg", self);
  return self;
}
Tensor sgn(const Tensor& self) {
  check_defined("sgn", self);
  if (!self.is_complex()) return sign(self);
  // z / |z|, and 0 where z is 0 (as PyTorch: there z / 1 is that 0), on
  // the real pairs.
  Tensor magnitude = detail::complex_abs(self);
  Tensor divisor = where(magnitude == 0, ones_like(magnitude), magnitude);
  return view_as_complex(view_as_real(self) / divisor.unsqueeze(-1));
}
Tensor detach(const Tensor& self) {
  check_defined("detach", self);
  return self.detach();
}
Tensor adjoint(const Tensor& self) {
  check_defined("adjoint", self);
  BRASA_CHECK(self.dim() >= 2, "adjoint: expected a tensor of at least 2 dims, got shape ",
              self.sizes());
  return conj(self.transpose(-2, -1));
}
Tensor fill(const Tensor& self, const Scalar& value) {
  check_defined("fill", self);
  return full_like(self, value);
}
Tensor fill(const Tensor& self, const Tensor& value) {
  check_defined("fill", self);
  BRASA_CHECK(value.defined() && value.dim() == 0,
              "fill: only supports a 0-dimension value tensor, but got tensor with ",
              value.defined() ? value.dim() : -1, " dimension(s)");
  // zeros + value keeps the gradient to value (expanded), as libtorch does.
  return zeros_like(self) + value.to(self.device()).to(self.scalar_type());
}

}  // namespace brasa
