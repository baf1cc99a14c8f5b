// Tensor methods and operators: thin forwards to the free functions of core/ops.
#include <brasa/autograd/record.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/copy_variants.h>
#include <brasa/ops/split_combine.h>
#include <brasa/ops/math_extra.h>
#include <brasa/ops/decompositions.h>
#include <brasa/ops/aliases.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/random.h>
#include <brasa/ops/counting.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/scatter_reduce.h>
#include <brasa/ops/shape.h>
#include <brasa/ops/special.h>
#include <brasa/ops/statistics.h>
#include <brasa/ops/type_queries.h>
#include <brasa/ops/sort.h>
#include <brasa/ops/unary.h>
#include <brasa/tensor/indexing.h>
#include <brasa/tensor/tensor.h>

namespace brasa {

void Tensor::throw_undefined() {
  BRASA_ERROR(
      "Tensor: the tensor is undefined (default-constructed or reset); call an op on a defined "
      "tensor");
}

void Tensor::check_dtype(ScalarType expected, const char* what) const {
  BRASA_CHECK(dtype() == expected, what, ": expected scalar type ", expected, " but found ",
              dtype());
}

void Tensor::check_accessor(size_t n) const {
  BRASA_CHECK(static_cast<size_t>(dim()) == n, "accessor: TensorAccessor expected ", n,
              " dims but tensor has ", dim());
}

int64_t Tensor::size(int64_t d) const { return sizes()[maybe_wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[maybe_wrap_dim(d, dim(), "stride")]; }

Scalar Tensor::item() const {
  BRASA_CHECK(numel() == 1, "item: a Tensor with ", numel(),
              " elements cannot be converted to Scalar");
  if (!is_cpu()) return to(Device(kCPU)).item();  // the value is read on the host
  return BRASA_DISPATCH_ALL_TYPES_AND_BOOL(dtype(), "item", [&]() -> Scalar {
    scalar_t v = *reinterpret_cast<const scalar_t*>(data_ptr());
    if constexpr (std::is_same_v<scalar_t, bool>)
      return Scalar(v);
    else if constexpr (std::is_floating_point_v<opmath_t<scalar_t>>)
      return Scalar(static_cast<double>(static_cast<opmath_t<scalar_t>>(v)));
    else
      return Scalar(static_cast<int64_t>(v));
  });
}

bool Tensor::is_nonzero() const {
  BRASA_CHECK(numel() == 1, "is_nonzero: Boolean value of Tensor with ",
              numel() == 0 ? "no values" : "more than one value", " is ambiguous");
  return item().toBool();
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  return brasa::copy_(*this, src, non_blocking);
}
Tensor Tensor::clone() const { return brasa::clone(*this); }
Tensor Tensor::contiguous() const { return brasa::contiguous(*this); }
Tensor Tensor::detach() const {
  auto impl2 = make_intrusive<TensorImpl>(storage(), dtype(), sizes(), strides(), storage_offset());
  return Tensor(std::move(impl2));
}

// ---- views ----
Tensor Tensor::view(IntArrayRef size) const { return brasa::view(*this, size); }
Tensor Tensor::view(ScalarType t) const {
  BRASA_CHECK(elementSize(t) == elementSize(dtype()),
              "view(dtype): only dtypes of the same element size are supported (", dtype(), " -> ",
              t, ")");
  auto impl2 = make_intrusive<TensorImpl>(storage(), t, sizes(), strides(), storage_offset());
  return Tensor(std::move(impl2));
}
Tensor Tensor::reshape(IntArrayRef size) const { return brasa::reshape(*this, size); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return brasa::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t d, IntArrayRef sizes) const {
  return brasa::unflatten(*this, d, sizes);
}
Tensor Tensor::permute(IntArrayRef dims) const { return brasa::permute(*this, dims); }
Tensor Tensor::movedim(int64_t s, int64_t d) const { return brasa::movedim(*this, s, d); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return brasa::transpose(*this, a, b); }
Tensor Tensor::t() const { return brasa::t(*this); }
Tensor Tensor::real() const { return brasa::real(*this); }
Tensor Tensor::imag() const { return brasa::imag(*this); }
Tensor Tensor::conj() const { return brasa::conj(*this); }
Tensor Tensor::conj_physical() const { return brasa::conj_physical(*this); }
Tensor& Tensor::conj_physical_() {
  if (is_complex()) brasa::imag(*this).neg_();
  return *this;
}
Tensor Tensor::resolve_conj() const { return brasa::resolve_conj(*this); }
Tensor Tensor::resolve_neg() const { return brasa::resolve_neg(*this); }
Tensor Tensor::angle() const { return brasa::angle(*this); }
Tensor Tensor::sgn() const { return brasa::sgn(*this); }
Tensor& Tensor::sgn_() { return copy_(brasa::sgn(*this)); }
Tensor Tensor::isreal() const { return brasa::isreal(*this); }
Tensor Tensor::adjoint() const { return brasa::adjoint(*this); }
Tensor Tensor::H() const {
  BRASA_CHECK(dim() == 2 || dim() == 0,
              "tensor.H is only supported on matrices (2-D tensors). Got ", dim(), "-D tensor.",
              dim() > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  return dim() == 0 ? *this : brasa::adjoint(*this);
}
Tensor Tensor::squeeze() const { return brasa::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return brasa::squeeze(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return brasa::unsqueeze(*this, d); }
Tensor Tensor::expand(IntArrayRef size, bool) const { return brasa::expand(*this, size); }
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const {
  return brasa::narrow(*this, d, s, l);
}
Tensor Tensor::slice(int64_t d, std::optional<int64_t> s, std::optional<int64_t> e,
                     int64_t st) const {
  return brasa::slice(*this, d, s, e, st);
}
Tensor Tensor::select(int64_t d, int64_t i) const { return brasa::select(*this, d, i); }
Tensor Tensor::unfold(int64_t d, int64_t s, int64_t st) const {
  return brasa::unfold(*this, d, s, st);
}
Tensor Tensor::diagonal(int64_t o, int64_t a, int64_t b) const {
  return brasa::diagonal(*this, o, a, b);
}
Tensor Tensor::as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> off) const {
  return brasa::as_strided(*this, size, stride, off);
}
std::vector<Tensor> Tensor::chunk(int64_t c, int64_t d) const { return brasa::chunk(*this, c, d); }
std::vector<Tensor> Tensor::split(int64_t s, int64_t d) const { return brasa::split(*this, s, d); }
std::vector<Tensor> Tensor::split(IntArrayRef s, int64_t d) const {
  return brasa::split_with_sizes(*this, s, d);
}
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef s, int64_t d) const {
  return brasa::split_with_sizes(*this, s, d);
}
std::vector<Tensor> Tensor::unbind(int64_t d) const { return brasa::unbind(*this, d); }

// In-place shape changes rewrite this tensor's own metadata.
static Tensor& restride(Tensor& self, const Tensor& view) {
  self.unsafeGetTensorImpl()->set_sizes_and_strides(view.sizes(), view.strides());
  self.unsafeGetTensorImpl()->set_storage_offset(view.storage_offset());
  return self;
}
Tensor& Tensor::transpose_(int64_t a, int64_t b) { return restride(*this, transpose(a, b)); }
Tensor& Tensor::t_() { return restride(*this, t()); }
Tensor& Tensor::squeeze_() { return restride(*this, squeeze()); }
Tensor& Tensor::squeeze_(int64_t d) { return restride(*this, squeeze(d)); }
Tensor& Tensor::unsqueeze_(int64_t d) { return restride(*this, unsqueeze(d)); }

Tensor Tensor::index(ArrayRef<TensorIndex> indices) const {
  return detail::index_with(*this, indices);
}
Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return detail::index_with(*this, ArrayRef<TensorIndex>(indices.begin(), indices.size()));
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Tensor& v) {
  return detail::index_put_with(*this, indices, v);
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Scalar& v) {
  return detail::index_put_with(*this, indices, scalar_tensor(v, options()));
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& v) {
  return index_put_(ArrayRef<TensorIndex>(indices.begin(), indices.size()), v);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& v) {
  return index_put_(ArrayRef<TensorIndex>(indices.begin(), indices.size()), v);
}

// ---- elementwise ----
static Tensor wrap_scalar(const Tensor& self, const Scalar& s) {
  return detail::wrap_number(self, s);
}
Tensor Tensor::add(const Tensor& o, const Scalar& a) const { return brasa::add(*this, o, a); }
Tensor Tensor::add(const Scalar& o, const Scalar& a) const { return brasa::add(*this, o, a); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& a) { return detail::add_inplace(*this, o, a); }
Tensor& Tensor::add_(const Scalar& o, const Scalar& a) {
  return detail::add_inplace(*this, wrap_scalar(*this, o), a);
}
Tensor Tensor::sub(const Tensor& o, const Scalar& a) const { return brasa::sub(*this, o, a); }
Tensor Tensor::sub(const Scalar& o, const Scalar& a) const { return brasa::sub(*this, o, a); }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& a) {
  BRASA_CHECK(!(dtype() == kBool && o.dtype() == kBool),
              "sub_: subtraction, the `-` operator, with two bool tensors is not supported.");
  return detail::add_inplace(*this, o, -a);
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& a) {
  return detail::add_inplace(*this, wrap_scalar(*this, o), -a);
}
Tensor Tensor::mul(const Tensor& o) const { return brasa::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return brasa::mul(*this, o); }
Tensor& Tensor::mul_(const Tensor& o) { return detail::arith_inplace(BinaryOp::Mul, *this, o); }
Tensor& Tensor::mul_(const Scalar& o) {
  return detail::arith_inplace(BinaryOp::Mul, *this, wrap_scalar(*this, o));
}
Tensor Tensor::div(const Tensor& o, std::optional<std::string> m) const {
  return brasa::div(*this, o, m);
}
Tensor Tensor::div(const Scalar& o, std::optional<std::string> m) const {
  return brasa::div(*this, o, m);
}
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string> m) {
  return detail::div_inplace(*this, o, m);
}
Tensor& Tensor::div_(const Scalar& o, std::optional<std::string> m) {
  return detail::div_inplace(*this, wrap_scalar(*this, o), m);
}
Tensor Tensor::pow(const Tensor& e) const { return brasa::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return brasa::pow(*this, e); }
Tensor& Tensor::pow_(const Tensor& e) { return detail::arith_inplace(BinaryOp::Pow, *this, e); }
Tensor& Tensor::pow_(const Scalar& e) {
  return detail::arith_inplace(BinaryOp::Pow, *this, wrap_scalar(*this, e));
}
Tensor Tensor::atan2(const Tensor& o) const { return brasa::atan2(*this, o); }
Tensor& Tensor::atan2_(const Tensor& o) { return detail::arith_inplace(BinaryOp::Atan2, *this, o); }
Tensor Tensor::fmod(const Tensor& o) const { return brasa::fmod(*this, o); }
Tensor Tensor::fmod(const Scalar& o) const { return brasa::fmod(*this, o); }
Tensor& Tensor::fmod_(const Scalar& o) {
  return detail::arith_inplace(BinaryOp::Fmod, *this, wrap_scalar(*this, o));
}
Tensor Tensor::remainder(const Tensor& o) const { return brasa::remainder(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return brasa::remainder(*this, o); }
Tensor& Tensor::remainder_(const Scalar& o) {
  return detail::arith_inplace(BinaryOp::Remainder, *this, wrap_scalar(*this, o));
}
Tensor Tensor::minimum(const Tensor& o) const { return brasa::minimum(*this, o); }
Tensor Tensor::maximum(const Tensor& o) const { return brasa::maximum(*this, o); }
Tensor Tensor::lerp(const Tensor& e, const Scalar& w) const { return brasa::lerp(*this, e, w); }
Tensor Tensor::lerp(const Tensor& e, const Tensor& w) const { return brasa::lerp(*this, e, w); }
Tensor& Tensor::lerp_(const Tensor& e, const Scalar& w) {
  return detail::lerp_inplace(*this, e, scalar_tensor(w, TensorOptions().dtype(dtype())));
}
Tensor Tensor::addcmul(const Tensor& a, const Tensor& b, const Scalar& v) const {
  return brasa::addcmul(*this, a, b, v);
}
Tensor& Tensor::addcmul_(const Tensor& a, const Tensor& b, const Scalar& v) {
  return detail::addcmul_inplace(*this, a, b, v, false);
}
Tensor Tensor::addcdiv(const Tensor& a, const Tensor& b, const Scalar& v) const {
  return brasa::addcdiv(*this, a, b, v);
}
Tensor& Tensor::addcdiv_(const Tensor& a, const Tensor& b, const Scalar& v) {
  return detail::addcmul_inplace(*this, a, b, v, true);
}
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return brasa::clamp(*this, lo, hi);
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return detail::clamp_inplace(*this, lo, hi);
}
Tensor Tensor::clamp_min(const Scalar& lo) const { return brasa::clamp_min(*this, lo); }
Tensor& Tensor::clamp_min_(const Scalar& lo) {
  return detail::clamp_inplace(*this, lo, std::nullopt);
}
Tensor Tensor::clamp_max(const Scalar& hi) const { return brasa::clamp_max(*this, hi); }
Tensor& Tensor::clamp_max_(const Scalar& hi) {
  return detail::clamp_inplace(*this, std::nullopt, hi);
}
Tensor Tensor::where(const Tensor& c, const Tensor& o) const { return brasa::where(c, *this, o); }
Tensor Tensor::masked_fill(const Tensor& m, const Scalar& v) const {
  return brasa::masked_fill(*this, m, v);
}
Tensor Tensor::masked_fill(const Tensor& m, const Tensor& v) const {
  return brasa::masked_fill(*this, m, v);
}
Tensor& Tensor::masked_fill_(const Tensor& m, const Scalar& v) {
  return detail::masked_fill_inplace(*this, m, scalar_tensor(v, TensorOptions().dtype(dtype())));
}
Tensor& Tensor::masked_fill_(const Tensor& m, const Tensor& v) {
  return detail::masked_fill_inplace(*this, m, v);
}
#define BRASA_CMP_METHODS(name)                                                \
  Tensor Tensor::name(const Tensor& o) const { return brasa::name(*this, o); } \
  Tensor Tensor::name(const Scalar& o) const { return brasa::name(*this, o); }
BRASA_CMP_METHODS(eq)
BRASA_CMP_METHODS(ne)
BRASA_CMP_METHODS(lt)
BRASA_CMP_METHODS(le)
BRASA_CMP_METHODS(gt)
BRASA_CMP_METHODS(ge)
#undef BRASA_CMP_METHODS
#define BRASA_INPLACE_BINARY(name, fn, code) \
  Tensor& Tensor::name##_(const Tensor& o) { return detail::fn(code, *this, o); }
#define BRASA_INPLACE_COMPARE(name, code)                                          \
  BRASA_INPLACE_BINARY(name, compare_inplace, CompareOp::code)                     \
  Tensor& Tensor::name##_(const Scalar& o) {                                       \
    return detail::compare_inplace(CompareOp::code, *this, wrap_scalar(*this, o)); \
  }
BRASA_INPLACE_COMPARE(eq, Eq)
BRASA_INPLACE_COMPARE(ne, Ne)
BRASA_INPLACE_COMPARE(lt, Lt)
BRASA_INPLACE_COMPARE(le, Le)
BRASA_INPLACE_COMPARE(gt, Gt)
BRASA_INPLACE_COMPARE(ge, Ge)
BRASA_INPLACE_BINARY(logical_and, compare_inplace, CompareOp::LogicalAnd)
BRASA_INPLACE_BINARY(logical_or, compare_inplace, CompareOp::LogicalOr)
BRASA_INPLACE_BINARY(logical_xor, compare_inplace, CompareOp::LogicalXor)
BRASA_INPLACE_BINARY(bitwise_and, bitwise_inplace, BitwiseOp::And)
BRASA_INPLACE_BINARY(bitwise_or, bitwise_inplace, BitwiseOp::Or)
BRASA_INPLACE_BINARY(bitwise_xor, bitwise_inplace, BitwiseOp::Xor)
BRASA_INPLACE_BINARY(fmod, arith_inplace, BinaryOp::Fmod)
BRASA_INPLACE_BINARY(remainder, arith_inplace, BinaryOp::Remainder)
#undef BRASA_INPLACE_COMPARE
#undef BRASA_INPLACE_BINARY
Tensor& Tensor::logical_not_() { return copy_(brasa::logical_not(*this)); }
Tensor& Tensor::bitwise_not_() { return detail::unary_inplace(UnaryOp::bitwise_not, *this); }
Tensor& Tensor::nan_to_num_(std::optional<double> n, std::optional<double> p,
                            std::optional<double> q) {
  return copy_(brasa::nan_to_num(*this, n, p, q));
}
bool Tensor::equal(const Tensor& o) const { return brasa::equal(*this, o); }
bool Tensor::allclose(const Tensor& o, double r, double a, bool n) const {
  return brasa::allclose(*this, o, r, a, n);
}
Tensor Tensor::isclose(const Tensor& o, double r, double a, bool n) const {
  return brasa::isclose(*this, o, r, a, n);
}
Tensor Tensor::logical_and(const Tensor& o) const { return brasa::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return brasa::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return brasa::logical_xor(*this, o); }
Tensor Tensor::logical_not() const { return brasa::logical_not(*this); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return brasa::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return brasa::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return brasa::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_not() const { return brasa::bitwise_not(*this); }
Tensor Tensor::isnan() const { return brasa::isnan(*this); }
Tensor Tensor::isinf() const { return brasa::isinf(*this); }
Tensor Tensor::isfinite() const { return brasa::isfinite(*this); }
Tensor Tensor::nan_to_num(std::optional<double> n, std::optional<double> p,
                          std::optional<double> q) const {
  return brasa::nan_to_num(*this, n, p, q);
}

#define BRASA_UNARY_METHOD_DEF(name)                         \
  Tensor Tensor::name() const { return brasa::name(*this); } \
  Tensor& Tensor::name##_() { return detail::unary_inplace(UnaryOp::name, *this); }
BRASA_UNARY_METHOD_DEF(neg)
BRASA_UNARY_METHOD_DEF(abs)
BRASA_UNARY_METHOD_DEF(sign)
BRASA_UNARY_METHOD_DEF(exp)
BRASA_UNARY_METHOD_DEF(exp2)
BRASA_UNARY_METHOD_DEF(expm1)
BRASA_UNARY_METHOD_DEF(log)
BRASA_UNARY_METHOD_DEF(log2)
BRASA_UNARY_METHOD_DEF(log10)
BRASA_UNARY_METHOD_DEF(log1p)
BRASA_UNARY_METHOD_DEF(sqrt)
BRASA_UNARY_METHOD_DEF(rsqrt)
BRASA_UNARY_METHOD_DEF(reciprocal)
BRASA_UNARY_METHOD_DEF(sin)
BRASA_UNARY_METHOD_DEF(cos)
BRASA_UNARY_METHOD_DEF(tan)
BRASA_UNARY_METHOD_DEF(asin)
BRASA_UNARY_METHOD_DEF(acos)
BRASA_UNARY_METHOD_DEF(atan)
BRASA_UNARY_METHOD_DEF(sinh)
BRASA_UNARY_METHOD_DEF(cosh)
BRASA_UNARY_METHOD_DEF(tanh)
BRASA_UNARY_METHOD_DEF(sigmoid)
BRASA_UNARY_METHOD_DEF(relu)
BRASA_UNARY_METHOD_DEF(erf)
BRASA_UNARY_METHOD_DEF(erfinv)
BRASA_UNARY_METHOD_DEF(floor)
BRASA_UNARY_METHOD_DEF(ceil)
BRASA_UNARY_METHOD_DEF(round)
BRASA_UNARY_METHOD_DEF(trunc)
BRASA_UNARY_METHOD_DEF(frac)
BRASA_UNARY_METHOD_DEF(square)
#undef BRASA_UNARY_METHOD_DEF

// ---- reductions ----
Tensor Tensor::sum(std::optional<ScalarType> t) const { return brasa::sum(*this, t); }
Tensor Tensor::sum(IntArrayRef d, bool k, std::optional<ScalarType> t) const {
  return brasa::sum(*this, d, k, t);
}
Tensor Tensor::mean(std::optional<ScalarType> t) const { return brasa::mean(*this, t); }
Tensor Tensor::mean(IntArrayRef d, bool k, std::optional<ScalarType> t) const {
  return brasa::mean(*this, d, k, t);
}
Tensor Tensor::prod(std::optional<ScalarType> t) const { return brasa::prod(*this, t); }
Tensor Tensor::prod(int64_t d, bool k, std::optional<ScalarType> t) const {
  return brasa::prod(*this, d, k, t);
}
Tensor Tensor::max() const { return brasa::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool k) const { return brasa::max(*this, d, k); }
Tensor Tensor::min() const { return brasa::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool k) const { return brasa::min(*this, d, k); }
Tensor Tensor::amax(IntArrayRef d, bool k) const { return brasa::amax(*this, d, k); }
Tensor Tensor::amin(IntArrayRef d, bool k) const { return brasa::amin(*this, d, k); }
Tensor Tensor::argmax(std::optional<int64_t> d, bool k) const { return brasa::argmax(*this, d, k); }
Tensor Tensor::argmin(std::optional<int64_t> d, bool k) const { return brasa::argmin(*this, d, k); }
Tensor Tensor::var_all(bool u) const { return brasa::var(*this, u); }
Tensor Tensor::var(IntArrayRef d, bool u, bool k) const { return brasa::var(*this, d, u, k); }
Tensor Tensor::std_all(bool u) const { return brasa::std(*this, u); }
Tensor Tensor::std(IntArrayRef d, bool u, bool k) const { return brasa::std(*this, d, u, k); }
Tensor Tensor::norm(const Scalar& p) const { return brasa::norm(*this, p); }
Tensor Tensor::norm(std::optional<Scalar> p, IntArrayRef d, bool k) const {
  return brasa::norm(*this, p, d, k);
}
Tensor Tensor::logsumexp(IntArrayRef d, bool k) const { return brasa::logsumexp(*this, d, k); }
Tensor Tensor::all() const { return brasa::all(*this); }
Tensor Tensor::all(int64_t d, bool k) const { return brasa::all(*this, d, k); }
Tensor Tensor::any() const { return brasa::any(*this); }
Tensor Tensor::any(int64_t d, bool k) const { return brasa::any(*this, d, k); }
Tensor Tensor::softmax(int64_t d, std::optional<ScalarType> t) const {
  return brasa::softmax(*this, d, t);
}
Tensor Tensor::log_softmax(int64_t d, std::optional<ScalarType> t) const {
  return brasa::log_softmax(*this, d, t);
}
Tensor Tensor::cumsum(int64_t d, std::optional<ScalarType> t) const {
  return brasa::cumsum(*this, d, t);
}
Tensor Tensor::cumprod(int64_t d, std::optional<ScalarType> t) const {
  return brasa::cumprod(*this, d, t);
}
std::tuple<Tensor, Tensor> Tensor::sort(int64_t d, bool desc) const {
  return brasa::sort(*this, d, desc);
}
std::tuple<Tensor, Tensor> Tensor::sort(std::optional<bool> s, int64_t d, bool desc) const {
  return brasa::sort(*this, s, d, desc);
}
Tensor Tensor::argsort(int64_t d, bool desc) const { return brasa::argsort(*this, d, desc); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t d, bool l, bool s) const {
  return brasa::topk(*this, k, d, l, s);
}
Tensor Tensor::flip(IntArrayRef d) const { return brasa::flip(*this, d); }
Tensor Tensor::roll(IntArrayRef s, IntArrayRef d) const { return brasa::roll(*this, s, d); }
Tensor Tensor::tril(int64_t k) const { return brasa::tril(*this, k); }
Tensor Tensor::triu(int64_t k) const { return brasa::triu(*this, k); }
Tensor& Tensor::tril_(int64_t k) { return copy_(brasa::tril(*this, k)); }
Tensor& Tensor::triu_(int64_t k) { return copy_(brasa::triu(*this, k)); }
Tensor Tensor::repeat(IntArrayRef r) const { return brasa::repeat(*this, r); }
Tensor Tensor::tile(IntArrayRef d) const { return brasa::tile(*this, d); }
Tensor Tensor::gather(int64_t d, const Tensor& i) const { return brasa::gather(*this, d, i); }
Tensor Tensor::scatter(int64_t d, const Tensor& i, const Tensor& s) const {
  return brasa::scatter(*this, d, i, s);
}
Tensor Tensor::scatter(int64_t d, const Tensor& i, const Scalar& v) const {
  return brasa::scatter(*this, d, i, v);
}
Tensor& Tensor::scatter_(int64_t d, const Tensor& i, const Tensor& s) {
  return detail::scatter_inplace(*this, d, i, s, false);
}
Tensor& Tensor::scatter_(int64_t d, const Tensor& i, const Scalar& v) {
  return detail::scatter_inplace(*this, d, i, scalar_tensor(v, TensorOptions().dtype(dtype())),
                                 false);
}
Tensor Tensor::scatter_add(int64_t d, const Tensor& i, const Tensor& s) const {
  return brasa::scatter_add(*this, d, i, s);
}
Tensor& Tensor::scatter_add_(int64_t d, const Tensor& i, const Tensor& s) {
  return detail::scatter_inplace(*this, d, i, s, true);
}
Tensor Tensor::index_select(int64_t d, const Tensor& i) const {
  return brasa::index_select(*this, d, i);
}
Tensor Tensor::index_add(int64_t d, const Tensor& i, const Tensor& s, const Scalar& a) const {
  return brasa::index_add(*this, d, i, s, a);
}
Tensor& Tensor::index_add_(int64_t d, const Tensor& i, const Tensor& s, const Scalar& a) {
  return detail::index_add_inplace(*this, d, i, s, a);
}
Tensor Tensor::index_copy(int64_t d, const Tensor& i, const Tensor& s) const {
  return brasa::index_copy(*this, d, i, s);
}
Tensor& Tensor::index_copy_(int64_t d, const Tensor& i, const Tensor& s) {
  return copy_(brasa::index_copy(*this, d, i, s));
}
Tensor Tensor::index_fill(int64_t d, const Tensor& i, const Scalar& v) const {
  return brasa::index_fill(*this, d, i, v);
}
Tensor Tensor::index_fill(int64_t d, const Tensor& i, const Tensor& v) const {
  return brasa::index_fill(*this, d, i, v);
}
Tensor& Tensor::index_fill_(int64_t d, const Tensor& i, const Scalar& v) {
  return copy_(brasa::index_fill(*this, d, i, v));
}
Tensor& Tensor::index_fill_(int64_t d, const Tensor& i, const Tensor& v) {
  return copy_(brasa::index_fill(*this, d, i, v));
}
Tensor Tensor::take(const Tensor& i) const { return brasa::take(*this, i); }
Tensor Tensor::put(const Tensor& i, const Tensor& s, bool acc) const {
  return brasa::put(*this, i, s, acc);
}
Tensor& Tensor::put_(const Tensor& i, const Tensor& s, bool acc) {
  return copy_(brasa::put(*this, i, s, acc));
}
Tensor Tensor::masked_scatter(const Tensor& m, const Tensor& s) const {
  return brasa::masked_scatter(*this, m, s);
}
Tensor& Tensor::masked_scatter_(const Tensor& m, const Tensor& s) {
  return copy_(brasa::masked_scatter(*this, m, s));
}
Tensor Tensor::scatter_reduce(int64_t d, const Tensor& i, const Tensor& s, const std::string& r,
                              bool include_self) const {
  return brasa::scatter_reduce(*this, d, i, s, r, include_self);
}
Tensor& Tensor::scatter_reduce_(int64_t d, const Tensor& i, const Tensor& s, const std::string& r,
                                bool include_self) {
  return autograd::inplace(
      "scatter_reduce_", *this,
      [&] {
        autograd::copy_without_grad(*this, brasa::scatter_reduce(*this, d, i, s, r, include_self));
      },
      [&](const Tensor& old) { return brasa::scatter_reduce(old, d, i, s, r, include_self); }, s);
}
Tensor Tensor::index_reduce(int64_t d, const Tensor& i, const Tensor& s, const std::string& r,
                            bool include_self) const {
  return brasa::index_reduce(*this, d, i, s, r, include_self);
}
Tensor& Tensor::index_reduce_(int64_t d, const Tensor& i, const Tensor& s, const std::string& r,
                              bool include_self) {
  return autograd::inplace(
      "index_reduce_", *this,
      [&] {
        autograd::copy_without_grad(*this, brasa::index_reduce(*this, d, i, s, r, include_self));
      },
      [&](const Tensor& old) { return brasa::index_reduce(old, d, i, s, r, include_self); }, s);
}
Tensor Tensor::logcumsumexp(int64_t d) const { return brasa::logcumsumexp(*this, d); }
Tensor Tensor::igamma(const Tensor& o) const { return brasa::igamma(*this, o); }
Tensor Tensor::igammac(const Tensor& o) const { return brasa::igammac(*this, o); }
Tensor Tensor::masked_select(const Tensor& m) const { return brasa::masked_select(*this, m); }
Tensor Tensor::nonzero() const { return brasa::nonzero(*this); }

// ---- linear algebra ----
Tensor Tensor::mm(const Tensor& o) const { return brasa::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return brasa::bmm(*this, o); }
Tensor Tensor::matmul(const Tensor& o) const { return brasa::matmul(*this, o); }
Tensor Tensor::mv(const Tensor& v) const { return brasa::mv(*this, v); }
Tensor Tensor::dot(const Tensor& o) const { return brasa::dot(*this, o); }
Tensor Tensor::outer(const Tensor& o) const { return brasa::outer(*this, o); }
Tensor Tensor::addmm(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) const {
  return brasa::addmm(*this, a, b, be, al);
}
Tensor& Tensor::addmm_(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) {
  return detail::addmm_inplace(*this, a, b, be, al);
}
Tensor Tensor::addbmm(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) const {
  return brasa::addbmm(*this, a, b, be, al);
}
Tensor Tensor::baddbmm(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) const {
  return brasa::baddbmm(*this, a, b, be, al);
}
Tensor& Tensor::addbmm_(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) {
  return detail::addbmm_inplace(*this, a, b, be, al);
}
Tensor& Tensor::baddbmm_(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) {
  return detail::baddbmm_inplace(*this, a, b, be, al);
}
Tensor Tensor::addmv(const Tensor& m, const Tensor& v, const Scalar& be, const Scalar& al) const {
  return brasa::addmv(*this, m, v, be, al);
}
Tensor& Tensor::addmv_(const Tensor& m, const Tensor& v, const Scalar& be, const Scalar& al) {
  return detail::addmv_inplace(*this, m, v, be, al);
}
Tensor Tensor::addr(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) const {
  return brasa::addr(*this, a, b, be, al);
}
Tensor& Tensor::addr_(const Tensor& a, const Tensor& b, const Scalar& be, const Scalar& al) {
  return detail::addr_inplace(*this, a, b, be, al);
}

// ---- random ----
Tensor& Tensor::uniform_(double f, double t) { return brasa::uniform_(*this, f, t); }
Tensor& Tensor::normal_(double m, double s) { return brasa::normal_(*this, m, s); }
Tensor& Tensor::bernoulli_(double p) { return brasa::bernoulli_(*this, p); }
Tensor& Tensor::random_(int64_t f, int64_t t) { return brasa::random_(*this, f, t); }

// ---- operators ----
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) {
  return div(scalar_tensor(a, TensorOptions().dtype(
                                  detail::result_type({detail::operand(a), detail::operand(b)}))),
             b);
}
Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator%(const Tensor& a, const Scalar& b) { return remainder(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }

// ---- libtorch's method spellings of functions ----
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
bool Tensor::is_same_size(const Tensor& o) const { return sizes() == o.sizes(); }
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
