// Tensor methods and operators: thin forwards to the free functions of core/ops.
#include <brasa/autograd/record.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/complex.h>
#include <brasa/ops/copy.h>
#include <brasa/ops/counting.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/linalg.h>
#include <brasa/ops/random.h>
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

namespace {
// The dims of a channels-last layout from the innermost out: C, then the
// spatial dims, then N.
std::vector<int64_t> channels_last_order(int64_t dim) {
  std::vector<int64_t> order{1};
  for (int64_t d = dim - 1; d >= 2; --d) order.push_back(d);
  order.push_back(0);
  return order;
}
int64_t channels_last_rank(MemoryFormat format) {
  return format == MemoryFormat::ChannelsLast ? 4 : 5;
}
}  // namespace

bool Tensor::is_contiguous(MemoryFormat format) const {
  if (format == MemoryFormat::Contiguous || format == MemoryFormat::Preserve)
    return is_contiguous();
  if (dim() != channels_last_rank(format)) return false;
  // Row-major in the order C, W, H(, D), N, size-1 dims taking any stride.
  int64_t expected = 1;
  for (int64_t d : channels_last_order(dim())) {
    if (size(d) != 1 && stride(d) != expected) return false;
    expected *= size(d);
  }
  return true;
}

MemoryFormat Tensor::suggest_memory_format(bool channels_last_strides_exact_match) const {
  (void)channels_last_strides_exact_match;
  for (MemoryFormat f : {MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d})
    if (dim() == channels_last_rank(f) && is_contiguous(f) && !is_contiguous()) return f;
  return MemoryFormat::Contiguous;
}

Tensor Tensor::contiguous(MemoryFormat format) const {
  if (format == MemoryFormat::Preserve)
    return is_contiguous() || suggest_memory_format() != MemoryFormat::Contiguous ? *this
                                                                                  : contiguous();
  if (format == MemoryFormat::Contiguous) return contiguous();
  const int64_t rank = channels_last_rank(format);
  BRASA_CHECK(dim() == rank, "contiguous: required rank ", rank, " tensor to use ",
              format == MemoryFormat::ChannelsLast ? "channels_last" : "channels_last_3d",
              " format, got shape ", sizes());
  if (is_contiguous(format)) return *this;
  // Permute to the storage order, make that row-major, and permute back: a
  // [N, C, ...] tensor whose memory is [N, ..., C].
  std::vector<int64_t> to_storage{0}, back(rank);
  for (int64_t d = 2; d < rank; ++d) to_storage.push_back(d);
  to_storage.push_back(1);
  for (int64_t i = 0; i < rank; ++i) back[to_storage[i]] = i;
  return permute(to_storage).contiguous().permute(back);
}

Tensor& Tensor::resize_(IntArrayRef size, std::optional<MemoryFormat> memory_format) {
  BRASA_CHECK(!requires_grad(), "cannot resize variables that require grad");
  int64_t numel = 1;
  for (int64_t s : size) {
    BRASA_CHECK(s >= 0, "resize_: Trying to create tensor with negative dimension ", s, ": ", size);
    numel *= s;
  }
  const MemoryFormat format = memory_format.value_or(MemoryFormat::Contiguous);
  std::vector<int64_t> strides(size.size(), 1);
  if (format == MemoryFormat::ChannelsLast || format == MemoryFormat::ChannelsLast3d) {
    const int64_t rank = channels_last_rank(format);
    BRASA_CHECK(static_cast<int64_t>(size.size()) == rank, "resize_: required rank ", rank,
                " tensor to use channels_last", rank == 5 ? "_3d" : "", " format, got size ", size);
    int64_t expected = 1;
    for (int64_t d : channels_last_order(rank)) {
      strides[d] = expected;
      expected *= std::max<int64_t>(size[d], 1);
    }
  } else {  // Contiguous, or Preserve (which libtorch treats as contiguous here)
    DimVector c = contiguous_strides(size);
    strides.assign(c.begin(), c.end());
  }
  const size_t needed = numel == 0 ? 0 : (storage_offset() + numel) * element_size();
  if (needed > storage()->nbytes()) storage()->resize(needed);
  impl()->set_sizes_and_strides(size, strides);
  return *this;
}

Tensor& Tensor::resize_as_(const Tensor& the_template, std::optional<MemoryFormat> memory_format) {
  return resize_(the_template.sizes(), memory_format);
}

Tensor Tensor::numpy_T() const {
  std::vector<int64_t> order(dim());
  for (int64_t d = 0; d < dim(); ++d) order[d] = dim() - 1 - d;
  return permute(order);
}

Tensor Tensor::sum_to_size(IntArrayRef size) const {
  // size must broadcast to this shape: aligned from the right, each dim equal or 1.
  bool expandable = size.size() <= static_cast<size_t>(dim());
  for (size_t i = 0; expandable && i < size.size(); ++i) {
    const int64_t mine = sizes()[dim() - size.size() + i];
    expandable = size[i] == mine || size[i] == 1;
  }
  BRASA_CHECK(expandable, "sum_to_size: size {", size, "} is not expandable to size {", sizes(),
              "}.");
  return autograd::sum_to(*this, size);
}
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

}  // namespace brasa
