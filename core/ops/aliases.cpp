#include <brasa/ops/aliases.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/shape.h>

#include <cmath>
#include <numbers>

namespace brasa {

Tensor arccos(const Tensor& self) { return self.acos(); }
Tensor arcsin(const Tensor& self) { return self.asin(); }
Tensor arctan(const Tensor& self) { return self.atan(); }
Tensor arctan2(const Tensor& self, const Tensor& other) { return self.atan2(other); }
Tensor greater(const Tensor& self, const Tensor& other) { return self.gt(other); }
Tensor greater_equal(const Tensor& self, const Tensor& other) { return self.ge(other); }
Tensor less(const Tensor& self, const Tensor& other) { return self.lt(other); }
Tensor less_equal(const Tensor& self, const Tensor& other) { return self.le(other); }
Tensor not_equal(const Tensor& self, const Tensor& other) { return self.ne(other); }
Tensor multiply(const Tensor& self, const Tensor& other) { return self.mul(other); }
Tensor divide(const Tensor& self, const Tensor& other) { return self.div(other); }
Tensor subtract(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return self.sub(other, alpha);
}
Tensor fix(const Tensor& self) { return self.trunc(); }
Tensor swapaxes(const Tensor& self, int64_t a0, int64_t a1) { return self.transpose(a0, a1); }
Tensor swapdims(const Tensor& self, int64_t d0, int64_t d1) { return self.transpose(d0, d1); }
Tensor moveaxis(const Tensor& self, int64_t s, int64_t d) { return movedim(self, s, d); }
Tensor concatenate(TensorList tensors, int64_t dim) { return cat(tensors, dim); }
Tensor row_stack(TensorList tensors) { return vstack(tensors); }
Tensor ravel(const Tensor& self) { return self.reshape({-1}); }
Tensor fliplr(const Tensor& self) {
  BRASA_CHECK(self.dim() >= 2, "fliplr: expected a tensor of at least 2 dims, got shape ",
              self.sizes());
  return self.flip({1});
}
Tensor flipud(const Tensor& self) {
  BRASA_CHECK(self.dim() >= 1, "flipud: expected a tensor of at least 1 dim, got shape ",
              self.sizes());
  return self.flip({0});
}
Tensor positive(const Tensor& self) {
  BRASA_CHECK(self.scalar_type() != kBool,
              "positive: the + operator on a bool tensor is not supported");
  return self;
}

namespace {
void check_floating(const char* op, const Tensor& t) {
  BRASA_CHECK(t.is_floating_point(), op, ": expected a floating tensor, got ", t.dtype());
}
}  // namespace

Tensor acosh(const Tensor& self) {
  check_floating("acosh", self);
  return (self + (self * self - 1).sqrt()).log();
}
// Written for odd symmetry and accuracy at large |x|: sign(x) log(|x| + sqrt(x^2 + 1)).
Tensor asinh(const Tensor& self) {
  check_floating("asinh", self);
  Tensor a = self.abs();
  return self.sign() * (a + (a * a + 1).sqrt()).log();
}
Tensor atanh(const Tensor& self) {
  check_floating("atanh", self);
  return ((1 + self) / (1 - self)).log() * 0.5;
}
Tensor arccosh(const Tensor& self) { return acosh(self); }
Tensor arcsinh(const Tensor& self) { return asinh(self); }
Tensor arctanh(const Tensor& self) { return atanh(self); }
Tensor deg2rad(const Tensor& self) {
  check_floating("deg2rad", self);
  return self * (std::numbers::pi / 180.0);
}
Tensor rad2deg(const Tensor& self) {
  check_floating("rad2deg", self);
  return self * (180.0 / std::numbers::pi);
}
Tensor hypot(const Tensor& self, const Tensor& other) {
  check_floating("hypot", self);
  return (self * self + other * other).sqrt();
}
// max(a, b) + log1p(exp(-|a - b|)): no overflow for large inputs.
Tensor logaddexp(const Tensor& self, const Tensor& other) {
  check_floating("logaddexp", self);
  return maximum(self, other) + (-(self - other).abs()).exp().log1p();
}
Tensor logaddexp2(const Tensor& self, const Tensor& other) {
  check_floating("logaddexp2", self);
  const double ln2 = std::numbers::ln2;
  return maximum(self, other) + (-(self - other).abs() * ln2).exp().log1p() / ln2;
}
Tensor xlogy(const Tensor& self, const Tensor& other) {
  check_floating("xlogy", self);
  // NaN in y stays NaN even where x == 0, as in PyTorch.
  return where(self.eq(0).logical_and(other.isnan().logical_not()), zeros_like(self),
               self * other.log());
}
Tensor logit(const Tensor& self, std::optional<double> eps) {
  check_floating("logit", self);
  Tensor x = eps ? self.clamp(*eps, 1.0 - *eps) : self;
  return (x / (1 - x)).log();
}
Tensor sinc(const Tensor& self) {
  check_floating("sinc", self);
  Tensor px = self * std::numbers::pi;
  // At 0 the limit 1; elsewhere sin(pi x) / (pi x). The safe denominator keeps
  // the unused branch (and its gradient) finite.
  Tensor zero = self.eq(0);
  Tensor safe = where(zero, ones_like(px), px);
  return where(zero, ones_like(px), safe.sin() / safe);
}
Tensor nansum(const Tensor& self) {
  if (!self.is_floating_point()) return self.sum();
  return where(self.isnan(), zeros_like(self), self).sum();
}
Tensor nanmean(const Tensor& self) {
  check_floating("nanmean", self);
  Tensor present = self.isnan().logical_not();
  return nansum(self) / present.sum().to(self.scalar_type());
}
Tensor atleast_1d(const Tensor& self) { return self.dim() >= 1 ? self : self.reshape({1}); }
Tensor atleast_2d(const Tensor& self) {
  if (self.dim() >= 2) return self;
  return self.dim() == 1 ? self.unsqueeze(0) : self.reshape({1, 1});
}
Tensor atleast_3d(const Tensor& self) {
  if (self.dim() >= 3) return self;
  if (self.dim() == 2) return self.unsqueeze(-1);
  if (self.dim() == 1) return self.unsqueeze(0).unsqueeze(-1);
  return self.reshape({1, 1, 1});
}
// 1-d tensors become columns, then the columns are joined side by side.
Tensor column_stack(TensorList tensors) {
  BRASA_CHECK(!tensors.empty(), "column_stack: expected a non-empty list of tensors");
  std::vector<Tensor> columns;
  for (const Tensor& t : tensors) columns.push_back(t.dim() <= 1 ? t.reshape({-1, 1}) : t);
  return hstack(columns);
}

}  // namespace brasa
