// libtorch's method spellings of functions Brasa has as free functions
// (aliases, special functions, reductions, shapes, linear algebra, sampling)
// and their in-place forms: each calls the function of the same name; an
// in-place form copies its result into the tensor, so autograd records the
// copy. Split from tensor_methods.cpp, which holds the methods with logic
// of their own.
#include <brasa/ops/aliases.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy_variants.h>
#include <brasa/ops/counting.h>
#include <brasa/ops/decompositions.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/math_extra.h>
#include <brasa/ops/random.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/sort.h>
#include <brasa/ops/special.h>
#include <brasa/ops/split_combine.h>
#include <brasa/ops/statistics.h>
#include <brasa/ops/type_queries.h>
#include <brasa/ops/unary.h>
#include <brasa/tensor/tensor.h>

namespace brasa {

#define BRASA_FORWARD_UNARY(name) \
  Tensor Tensor::name() const { return brasa::name(*this); }
BRASA_FORWARD_UNARY(absolute)
BRASA_FORWARD_UNARY(acosh)
BRASA_FORWARD_UNARY(asinh)
BRASA_FORWARD_UNARY(atanh)
BRASA_FORWARD_UNARY(arccos)
BRASA_FORWARD_UNARY(arccosh)
BRASA_FORWARD_UNARY(arcsin)
BRASA_FORWARD_UNARY(arcsinh)
BRASA_FORWARD_UNARY(arctan)
BRASA_FORWARD_UNARY(arctanh)
BRASA_FORWARD_UNARY(erfc)
BRASA_FORWARD_UNARY(lgamma)
BRASA_FORWARD_UNARY(i0)
BRASA_FORWARD_UNARY(sinc)
BRASA_FORWARD_UNARY(fix)
BRASA_FORWARD_UNARY(deg2rad)
BRASA_FORWARD_UNARY(rad2deg)
BRASA_FORWARD_UNARY(signbit)
BRASA_FORWARD_UNARY(isposinf)
BRASA_FORWARD_UNARY(isneginf)
BRASA_FORWARD_UNARY(positive)
BRASA_FORWARD_UNARY(negative)
BRASA_FORWARD_UNARY(argwhere)
BRASA_FORWARD_UNARY(nansum)
BRASA_FORWARD_UNARY(nanmean)
BRASA_FORWARD_UNARY(median)
BRASA_FORWARD_UNARY(nanmedian)
BRASA_FORWARD_UNARY(msort)
BRASA_FORWARD_UNARY(ravel)
BRASA_FORWARD_UNARY(fliplr)
BRASA_FORWARD_UNARY(flipud)
BRASA_FORWARD_UNARY(trace)
BRASA_FORWARD_UNARY(det)
BRASA_FORWARD_UNARY(logdet)
BRASA_FORWARD_UNARY(inverse)
BRASA_FORWARD_UNARY(matrix_exp)
BRASA_FORWARD_UNARY(corrcoef)
#undef BRASA_FORWARD_UNARY

#define BRASA_FORWARD_BINARY(name) \
  Tensor Tensor::name(const Tensor& other) const { return brasa::name(*this, other); }
BRASA_FORWARD_BINARY(arctan2)
BRASA_FORWARD_BINARY(copysign)
BRASA_FORWARD_BINARY(divide)
BRASA_FORWARD_BINARY(multiply)
BRASA_FORWARD_BINARY(true_divide)
BRASA_FORWARD_BINARY(floor_divide)
BRASA_FORWARD_BINARY(fmax)
BRASA_FORWARD_BINARY(fmin)
BRASA_FORWARD_BINARY(gcd)
BRASA_FORWARD_BINARY(lcm)
BRASA_FORWARD_BINARY(hypot)
BRASA_FORWARD_BINARY(ldexp)
BRASA_FORWARD_BINARY(logaddexp)
BRASA_FORWARD_BINARY(logaddexp2)
BRASA_FORWARD_BINARY(nextafter)
BRASA_FORWARD_BINARY(xlogy)
BRASA_FORWARD_BINARY(heaviside)
BRASA_FORWARD_BINARY(float_power)
BRASA_FORWARD_BINARY(greater)
BRASA_FORWARD_BINARY(greater_equal)
BRASA_FORWARD_BINARY(less)
BRASA_FORWARD_BINARY(less_equal)
BRASA_FORWARD_BINARY(not_equal)
BRASA_FORWARD_BINARY(bitwise_left_shift)
BRASA_FORWARD_BINARY(bitwise_right_shift)
BRASA_FORWARD_BINARY(inner)
BRASA_FORWARD_BINARY(vdot)
BRASA_FORWARD_BINARY(kron)
#undef BRASA_FORWARD_BINARY

Tensor Tensor::logit(std::optional<double> eps) const { return brasa::logit(*this, eps); }
Tensor Tensor::subtract(const Tensor& o, const Scalar& a) const {
  return brasa::subtract(*this, o, a);
}
Tensor Tensor::clip(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return brasa::clip(*this, lo, hi);
}
Tensor& Tensor::clip_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return copy_(brasa::clip(*this, lo, hi));
}
Tensor Tensor::digamma() const { return brasa::digamma(*this); }
Tensor Tensor::polygamma(int64_t n) const { return brasa::polygamma(n, *this); }
Tensor Tensor::mvlgamma(int64_t p) const { return brasa::mvlgamma(*this, p); }

#define BRASA_FORWARD_UNARY_INPLACE(name) \
  Tensor& Tensor::name##_() { return copy_(brasa::name(*this)); }
BRASA_FORWARD_UNARY_INPLACE(absolute)
BRASA_FORWARD_UNARY_INPLACE(acosh)
BRASA_FORWARD_UNARY_INPLACE(asinh)
BRASA_FORWARD_UNARY_INPLACE(atanh)
BRASA_FORWARD_UNARY_INPLACE(arccos)
BRASA_FORWARD_UNARY_INPLACE(arccosh)
BRASA_FORWARD_UNARY_INPLACE(arcsin)
BRASA_FORWARD_UNARY_INPLACE(arcsinh)
BRASA_FORWARD_UNARY_INPLACE(arctan)
BRASA_FORWARD_UNARY_INPLACE(arctanh)
BRASA_FORWARD_UNARY_INPLACE(erfc)
BRASA_FORWARD_UNARY_INPLACE(lgamma)
BRASA_FORWARD_UNARY_INPLACE(digamma)
BRASA_FORWARD_UNARY_INPLACE(i0)
BRASA_FORWARD_UNARY_INPLACE(sinc)
BRASA_FORWARD_UNARY_INPLACE(fix)
BRASA_FORWARD_UNARY_INPLACE(deg2rad)
BRASA_FORWARD_UNARY_INPLACE(rad2deg)
BRASA_FORWARD_UNARY_INPLACE(negative)
#undef BRASA_FORWARD_UNARY_INPLACE

#define BRASA_FORWARD_BINARY_INPLACE(name) \
  Tensor& Tensor::name##_(const Tensor& other) { return copy_(brasa::name(*this, other)); }
BRASA_FORWARD_BINARY_INPLACE(arctan2)
BRASA_FORWARD_BINARY_INPLACE(copysign)
BRASA_FORWARD_BINARY_INPLACE(divide)
BRASA_FORWARD_BINARY_INPLACE(multiply)
BRASA_FORWARD_BINARY_INPLACE(true_divide)
BRASA_FORWARD_BINARY_INPLACE(floor_divide)
BRASA_FORWARD_BINARY_INPLACE(gcd)
BRASA_FORWARD_BINARY_INPLACE(lcm)
BRASA_FORWARD_BINARY_INPLACE(hypot)
BRASA_FORWARD_BINARY_INPLACE(ldexp)
BRASA_FORWARD_BINARY_INPLACE(xlogy)
BRASA_FORWARD_BINARY_INPLACE(heaviside)
BRASA_FORWARD_BINARY_INPLACE(nextafter)
BRASA_FORWARD_BINARY_INPLACE(greater)
BRASA_FORWARD_BINARY_INPLACE(greater_equal)
BRASA_FORWARD_BINARY_INPLACE(less)
BRASA_FORWARD_BINARY_INPLACE(less_equal)
BRASA_FORWARD_BINARY_INPLACE(not_equal)
#undef BRASA_FORWARD_BINARY_INPLACE

Tensor& Tensor::logit_(std::optional<double> eps) { return copy_(brasa::logit(*this, eps)); }
Tensor& Tensor::polygamma_(int64_t n) { return copy_(brasa::polygamma(n, *this)); }
Tensor& Tensor::mvlgamma_(int64_t p) { return copy_(brasa::mvlgamma(*this, p)); }
Tensor& Tensor::subtract_(const Tensor& o, const Scalar& a) {
  return copy_(brasa::subtract(*this, o, a));
}
Tensor& Tensor::cumsum_(int64_t d, std::optional<ScalarType> dtype) {
  return copy_(brasa::cumsum(*this, d, dtype));
}
std::tuple<Tensor, Tensor> Tensor::frexp() const { return brasa::frexp(*this); }
bool Tensor::is_same_size(const Tensor& o) const { return brasa::is_same_size(*this, o); }
// This tensor's dtype and device, replaced by those `o` sets, and o's
// requires_grad (libtorch's new_* semantics).
static TensorOptions new_options(const Tensor& t, const TensorOptions& o) {
  return TensorOptions()
      .dtype(o.has_dtype() ? o.dtype() : t.scalar_type())
      .device(o.has_device() ? o.device() : t.device())
      .requires_grad(o.requires_grad());
}
Tensor Tensor::new_empty(IntArrayRef size, const TensorOptions& o) const {
  return brasa::empty(size, new_options(*this, o));
}
Tensor Tensor::new_empty_strided(IntArrayRef size, IntArrayRef stride,
                                 const TensorOptions& o) const {
  return brasa::empty_strided(size, stride, new_options(*this, o));
}
Tensor Tensor::new_zeros(IntArrayRef size, const TensorOptions& o) const {
  return brasa::zeros(size, new_options(*this, o));
}
Tensor Tensor::new_ones(IntArrayRef size, const TensorOptions& o) const {
  return brasa::ones(size, new_options(*this, o));
}
Tensor Tensor::new_full(IntArrayRef size, const Scalar& v, const TensorOptions& o) const {
  return brasa::full(size, v, new_options(*this, o));
}
Tensor Tensor::take_along_dim(const Tensor& i, std::optional<int64_t> d) const {
  return brasa::take_along_dim(*this, i, d);
}
Tensor Tensor::select_scatter(const Tensor& src, int64_t d, int64_t i) const {
  return brasa::select_scatter(*this, src, d, i);
}
Tensor Tensor::slice_scatter(const Tensor& src, int64_t d, std::optional<int64_t> start,
                             std::optional<int64_t> end, int64_t step) const {
  return brasa::slice_scatter(*this, src, d, start, end, step);
}
Tensor Tensor::diagonal_scatter(const Tensor& src, int64_t off, int64_t d1, int64_t d2) const {
  return brasa::diagonal_scatter(*this, src, off, d1, d2);
}
Tensor Tensor::bincount(const std::optional<Tensor>& w, int64_t minlength) const {
  return brasa::bincount(*this, w, minlength);
}
Tensor Tensor::histc(int64_t bins, double lo, double hi) const {
  return brasa::histc(*this, bins, lo, hi);
}
Tensor Tensor::count_nonzero(std::optional<int64_t> d) const {
  return brasa::count_nonzero(*this, d);
}
std::tuple<Tensor, Tensor> Tensor::median(int64_t d, bool k) const {
  return brasa::median(*this, d, k);
}
std::tuple<Tensor, Tensor> Tensor::nanmedian(int64_t d, bool k) const {
  return brasa::nanmedian(*this, d, k);
}
std::tuple<Tensor, Tensor> Tensor::mode(int64_t d, bool k) const {
  return brasa::mode(*this, d, k);
}
std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t d, bool keep) const {
  return brasa::kthvalue(*this, k, d, keep);
}
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t d) const { return brasa::cummax(*this, d); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t d) const { return brasa::cummin(*this, d); }
std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> d, bool k) const {
  return brasa::aminmax(*this, d, k);
}
Tensor Tensor::diff(int64_t n, int64_t d, const std::optional<Tensor>& prepend,
                    const std::optional<Tensor>& append) const {
  return brasa::diff(*this, n, d, prepend, append);
}
Tensor Tensor::rot90(int64_t k, IntArrayRef dims) const { return brasa::rot90(*this, k, dims); }
Tensor Tensor::moveaxis(int64_t s, int64_t d) const { return brasa::moveaxis(*this, s, d); }
Tensor Tensor::swapaxes(int64_t a, int64_t b) const { return brasa::swapaxes(*this, a, b); }
Tensor Tensor::swapdims(int64_t a, int64_t b) const { return brasa::swapdims(*this, a, b); }
Tensor Tensor::broadcast_to(IntArrayRef size) const { return brasa::broadcast_to(*this, size); }
std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t d) const {
  return brasa::tensor_split(*this, sections, d);
}
std::vector<Tensor> Tensor::tensor_split(IntArrayRef indices, int64_t d) const {
  return brasa::tensor_split(*this, indices, d);
}
std::vector<Tensor> Tensor::hsplit(int64_t sections) const {
  return brasa::hsplit(*this, sections);
}
std::vector<Tensor> Tensor::vsplit(int64_t sections) const {
  return brasa::vsplit(*this, sections);
}
std::vector<Tensor> Tensor::dsplit(int64_t sections) const {
  return brasa::dsplit(*this, sections);
}
Tensor Tensor::repeat_interleave(int64_t r, std::optional<int64_t> d,
                                 std::optional<int64_t> size) const {
  return brasa::repeat_interleave(*this, r, d, size);
}
Tensor Tensor::repeat_interleave(const Tensor& r, std::optional<int64_t> d,
                                 std::optional<int64_t> size) const {
  return brasa::repeat_interleave(*this, r, d, size);
}
Tensor Tensor::diag(int64_t k) const { return brasa::diag(*this, k); }
Tensor Tensor::diag_embed(int64_t off, int64_t d1, int64_t d2) const {
  return brasa::diag_embed(*this, off, d1, d2);
}
Tensor Tensor::diagflat(int64_t off) const { return brasa::diagflat(*this, off); }
Tensor Tensor::cross(const Tensor& o, std::optional<int64_t> d) const {
  return brasa::cross(*this, o, d);
}
Tensor Tensor::dist(const Tensor& o, const Scalar& p) const { return brasa::dist(*this, o, p); }
Tensor Tensor::renorm(const Scalar& p, int64_t d, const Scalar& maxnorm) const {
  return brasa::renorm(*this, p, d, maxnorm);
}
std::tuple<Tensor, Tensor> Tensor::slogdet() const { return brasa::slogdet(*this); }
Tensor Tensor::pinverse(double rcond) const { return brasa::pinverse(*this, rcond); }
Tensor Tensor::matrix_power(int64_t n) const { return brasa::matrix_power(*this, n); }
Tensor Tensor::cholesky(bool upper) const { return brasa::cholesky(*this, upper); }
std::tuple<Tensor, Tensor> Tensor::qr(bool some) const { return brasa::qr(*this, some); }
std::tuple<Tensor, Tensor, Tensor> Tensor::svd(bool some, bool uv) const {
  return brasa::svd(*this, some, uv);
}
Tensor Tensor::bernoulli() const { return brasa::bernoulli(*this); }
Tensor Tensor::bernoulli(double p) const { return brasa::bernoulli(*this, p); }
Tensor Tensor::multinomial(int64_t n, bool replacement) const {
  return brasa::multinomial(*this, n, replacement);
}

}  // namespace brasa
