#pragma once
// Tensor: the user-facing handle, with libtorch's method names and signatures.
// Methods forward to the free functions of core/ops/.
#include <brasa/tensor/scalar.h>
#include <brasa/tensor/tensor_impl.h>
#include <brasa/tensor/tensor_options.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace brasa {

class Tensor;
namespace autograd {
class Node;
}
namespace indexing {
class TensorIndex;
}
using TensorIndex = indexing::TensorIndex;
using TensorList = ArrayRef<Tensor>;

template <class T, size_t N>
class TensorAccessor {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  TensorAccessor<T, N - 1> operator[](int64_t i) const {
    return TensorAccessor<T, N - 1>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  int64_t size(int64_t d) const { return sizes_[d]; }
  int64_t stride(int64_t d) const { return strides_[d]; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};
template <class T>
class TensorAccessor<T, 1> {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  T& operator[](int64_t i) const { return data_[strides_[0] * i]; }
  int64_t size(int64_t d) const { return sizes_[d]; }
  int64_t stride(int64_t d) const { return strides_[d]; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  // Assigning to a temporary writes into it, as in libtorch: x[0] = y copies
  // y into row 0 of x; x.index({...}) = 1.5 fills.
  Tensor& operator=(const Tensor& src) && { return copy_(src); }
  Tensor& operator=(const Scalar& v) && { return fill_(v); }

  // ---- metadata ----
  bool defined() const { return static_cast<bool>(impl_); }
  void reset() { impl_.reset(); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& getIntrusivePtr() const { return impl_; }
  int64_t dim() const { return impl()->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl()->numel(); }
  IntArrayRef sizes() const { return impl()->sizes(); }
  IntArrayRef strides() const { return impl()->strides(); }
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  ScalarType scalar_type() const { return impl()->dtype(); }
  ScalarType dtype() const { return impl()->dtype(); }
  Device device() const { return impl()->device(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  Layout layout() const { return kStrided; }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  bool is_contiguous() const { return impl()->is_contiguous(); }
  // Whether the strides are those of the format (MemoryFormat::ChannelsLast:
  // a 4-d tensor stored as NHWC).
  bool is_contiguous(MemoryFormat format) const;
  // ChannelsLast(3d) when the strides are channels last and not row-major, else Contiguous.
  MemoryFormat suggest_memory_format(bool channels_last_strides_exact_match = false) const;
  // Sparse and quantized tensors do not exist here.
  bool is_sparse() const { return false; }
  bool is_quantized() const { return false; }
  bool is_floating_point() const { return isFloatingType(dtype()); }
  bool is_complex() const { return isComplexType(dtype()); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  bool is_alias_of(const Tensor& o) const { return storage().is_alias_of(o.storage()); }
  // Moves the storage into shared memory in place (every view of it stays
  // valid and sees the new memory), as torch's share_memory_(); nothing to
  // do when it is already shared (tensor/shared_memory.h).
  Tensor& share_memory_();
  // Whether the storage lives in memory other processes can map.
  bool is_shared() const;
  // A copy in page-locked host memory (CUDA builds with a device), from which
  // copies to the GPU are faster and can be non_blocking; this tensor when it
  // is pinned already.
  Tensor pin_memory() const;
  bool is_pinned() const;
  bool is_nonzero() const;
  int64_t element_size() const { return static_cast<int64_t>(elementSize(dtype())); }
  int64_t itemsize() const { return element_size(); }
  size_t nbytes() const { return numel() * elementSize(dtype()); }
  const Storage& storage() const { return impl()->storage(); }
  int64_t storage_offset() const { return impl()->storage_offset(); }
  int32_t use_count() const { return impl_.use_count(); }
  std::string toString() const;
  void print() const;

  // ---- data access ----
  void* data_ptr() const { return impl()->data(); }
  template <class T>
  T* data_ptr() const {
    check_dtype(CppTypeToScalarType<T>::value, "data_ptr");
    return reinterpret_cast<T*>(impl()->data());
  }
  template <class T>
  const T* const_data_ptr() const {
    return data_ptr<T>();
  }
  template <class T>
  T* mutable_data_ptr() const {
    return data_ptr<T>();
  }
  Scalar item() const;
  template <class T>
  T item() const {
    return item().to<T>();
  }
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const& {
    check_accessor(N);
    return TensorAccessor<T, N>(data_ptr<T>(), sizes().data(), strides().data());
  }
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;

  // ---- autograd (core/autograd/variable.cpp) ----
  bool requires_grad() const { return impl()->requires_grad(); }
  Tensor& requires_grad_(bool r = true);
  Tensor& set_requires_grad(bool r) { return requires_grad_(r); }
  uint32_t _version() const { return storage()->version(); }
  void bump_version() const { storage()->bump_version(); }
  // The accumulated gradient (leaves, and non-leaves after retain_grad());
  // assignable: x.grad() = t.
  Tensor& grad() const;
  Tensor& mutable_grad() const { return grad(); }
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const;
  int64_t output_nr() const;
  void retain_grad() const;
  bool retains_grad() const;
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false,
                std::optional<std::vector<Tensor>> inputs = std::nullopt) const;
  Tensor& detach_();
  Tensor data() const { return detach(); }
  bool is_view() const { return impl()->view_base() != nullptr; }
  Tensor _base() const;
  // hook(grad) may return a replacement gradient; a hook returning void only observes.
  template <class Hook>
  unsigned register_hook(Hook&& hook) const {
    if constexpr (std::is_void_v<std::invoke_result_t<Hook, const Tensor&>>) {
      return add_hook([h = std::forward<Hook>(hook)](const Tensor& g) {
        h(g);
        return Tensor();
      });
    } else {
      return add_hook(std::function<Tensor(const Tensor&)>(std::forward<Hook>(hook)));
    }
  }
  void remove_hook(unsigned handle) const;
  // Runs after this leaf's .grad() was updated by a backward pass.
  void register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;

  // ---- conversion and copies ----
  Tensor to(ScalarType t, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device d, ScalarType t, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device d, bool non_blocking = false, bool copy = false) const;
  // x.to(kCPU): a device type alone would convert to Device and to TensorOptions alike.
  Tensor to(DeviceType d, bool non_blocking = false, bool copy = false) const {
    return to(Device(d), non_blocking, copy);
  }
  Tensor to(const TensorOptions& o, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor cuda() const { return to(Device(kCUDA)); }
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor clone() const;
  Tensor contiguous() const;
  // This tensor with the format's strides (a copy unless it has them already).
  Tensor contiguous(MemoryFormat format) const;
  Tensor& fill_(const Scalar& v);
  Tensor& fill_(const Tensor& v);
  Tensor& zero_();
  Tensor detach() const;  // shares storage; cuts autograd history

  // ---- views ----
  Tensor view(IntArrayRef size) const;
  Tensor view(ScalarType t) const;
  Tensor view_as(const Tensor& o) const { return view(o.sizes()); }
  Tensor reshape(IntArrayRef size) const;
  Tensor reshape_as(const Tensor& o) const { return reshape(o.sizes()); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor movedim(int64_t src, int64_t dst) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor& transpose_(int64_t d0, int64_t d1);
  Tensor t() const;
  Tensor& t_();
  Tensor mT() const { return transpose(-2, -1); }
  // All dims reversed (x.T of NumPy).
  Tensor numpy_T() const;
  // Summed down to a shape this tensor's shape broadcasts from.
  Tensor sum_to_size(IntArrayRef size) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor& squeeze_();
  Tensor& squeeze_(int64_t dim);
  Tensor unsqueeze(int64_t dim) const;
  Tensor& unsqueeze_(int64_t dim);
  Tensor expand(IntArrayRef size, bool implicit = false) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor as_strided(IntArrayRef size, IntArrayRef stride,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor operator[](int64_t i) const { return select(0, i); }
  Tensor index(ArrayRef<TensorIndex> indices) const;
  Tensor index(std::initializer_list<TensorIndex> indices) const;
  Tensor& index_put_(ArrayRef<TensorIndex> indices, const Tensor& values);
  Tensor& index_put_(ArrayRef<TensorIndex> indices, const Scalar& v);
  Tensor& index_put_(std::initializer_list<TensorIndex> indices, const Tensor& values);
  Tensor& index_put_(std::initializer_list<TensorIndex> indices, const Scalar& v);

  // ---- elementwise ----
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor& add_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& o, const Scalar& alpha = 1);
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& o, const Scalar& alpha = 1) const;
  Tensor& sub_(const Tensor& o, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& o, const Scalar& alpha = 1);
  Tensor mul(const Tensor& o) const;
  Tensor mul(const Scalar& o) const;
  Tensor& mul_(const Tensor& o);
  Tensor& mul_(const Scalar& o);
  Tensor div(const Tensor& o, std::optional<std::string> rounding_mode = std::nullopt) const;
  Tensor div(const Scalar& o, std::optional<std::string> rounding_mode = std::nullopt) const;
  Tensor& div_(const Tensor& o, std::optional<std::string> rounding_mode = std::nullopt);
  Tensor& div_(const Scalar& o, std::optional<std::string> rounding_mode = std::nullopt);
  Tensor pow(const Tensor& e) const;
  Tensor pow(const Scalar& e) const;
  Tensor& pow_(const Tensor& e);
  Tensor& pow_(const Scalar& e);
  Tensor atan2(const Tensor& o) const;
  Tensor& atan2_(const Tensor& o);
  Tensor fmod(const Tensor& o) const;
  Tensor fmod(const Scalar& o) const;
  Tensor& fmod_(const Scalar& o);
  Tensor remainder(const Tensor& o) const;
  Tensor remainder(const Scalar& o) const;
  Tensor& remainder_(const Scalar& o);
  Tensor minimum(const Tensor& o) const;
  Tensor maximum(const Tensor& o) const;
  Tensor lerp(const Tensor& end, const Scalar& w) const;
  Tensor lerp(const Tensor& end, const Tensor& w) const;
  Tensor& lerp_(const Tensor& end, const Scalar& w);
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor clamp_min(const Scalar& min) const;
  Tensor& clamp_min_(const Scalar& min);
  Tensor clamp_max(const Scalar& max) const;
  Tensor& clamp_max_(const Scalar& max);
  Tensor where(const Tensor& condition, const Tensor& other) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& v) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& v) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& v);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& v);
  Tensor eq(const Tensor& o) const;
  Tensor eq(const Scalar& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(const Scalar& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(const Scalar& o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(const Scalar& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(const Scalar& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(const Scalar& o) const;
  Tensor& eq_(const Tensor& o);
  Tensor& eq_(const Scalar& o);
  Tensor& ne_(const Tensor& o);
  Tensor& ne_(const Scalar& o);
  Tensor& lt_(const Tensor& o);
  Tensor& lt_(const Scalar& o);
  Tensor& le_(const Tensor& o);
  Tensor& le_(const Scalar& o);
  Tensor& gt_(const Tensor& o);
  Tensor& gt_(const Scalar& o);
  Tensor& ge_(const Tensor& o);
  Tensor& ge_(const Scalar& o);
  Tensor& logical_and_(const Tensor& o);
  Tensor& logical_or_(const Tensor& o);
  Tensor& logical_xor_(const Tensor& o);
  Tensor& logical_not_();
  Tensor& bitwise_and_(const Tensor& o);
  Tensor& bitwise_or_(const Tensor& o);
  Tensor& bitwise_xor_(const Tensor& o);
  Tensor& bitwise_not_();
  Tensor& fmod_(const Tensor& o);
  Tensor& remainder_(const Tensor& o);
  Tensor& nan_to_num_(std::optional<double> nan = std::nullopt,
                      std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);
  Tensor& operator&=(const Tensor& o) { return bitwise_and_(o); }
  Tensor& operator|=(const Tensor& o) { return bitwise_or_(o); }
  Tensor& operator^=(const Tensor& o) { return bitwise_xor_(o); }
  bool equal(const Tensor& o) const;
  bool allclose(const Tensor& o, double rtol = 1e-5, double atol = 1e-8,
                bool equal_nan = false) const;
  Tensor isclose(const Tensor& o, double rtol = 1e-5, double atol = 1e-8,
                 bool equal_nan = false) const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  Tensor logical_not() const;
  Tensor bitwise_and(const Tensor& o) const;
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor bitwise_not() const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  // ---- complex parts (ops/complex.h, ops/type_queries.h); for real dtypes
  // real(), conj() and resolve_conj() give this tensor, imag() is an error ----
  Tensor real() const;
  Tensor imag() const;
  Tensor conj() const;
  Tensor conj_physical() const;
  Tensor& conj_physical_();
  Tensor resolve_conj() const;
  Tensor resolve_neg() const;
  // Brasa conjugates and negates eagerly, so no tensor carries a lazy bit.
  bool is_conj() const { return false; }
  bool is_neg() const { return false; }
  Tensor angle() const;
  Tensor sgn() const;
  Tensor& sgn_();
  Tensor isreal() const;
  Tensor adjoint() const;
  Tensor mH() const { return adjoint(); }
  Tensor H() const;  // the conjugate transpose of a matrix (a 0-d tensor: itself)
  Tensor nan_to_num(std::optional<double> nan = std::nullopt,
                    std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;

#define BRASA_UNARY_METHOD(name) \
  Tensor name() const;           \
  Tensor& name##_();
  BRASA_UNARY_METHOD(neg)
  BRASA_UNARY_METHOD(abs)
  BRASA_UNARY_METHOD(sign)
  BRASA_UNARY_METHOD(exp)
  BRASA_UNARY_METHOD(exp2)
  BRASA_UNARY_METHOD(expm1)
  BRASA_UNARY_METHOD(log)
  BRASA_UNARY_METHOD(log2)
  BRASA_UNARY_METHOD(log10)
  BRASA_UNARY_METHOD(log1p)
  BRASA_UNARY_METHOD(sqrt)
  BRASA_UNARY_METHOD(rsqrt)
  BRASA_UNARY_METHOD(reciprocal)
  BRASA_UNARY_METHOD(sin)
  BRASA_UNARY_METHOD(cos)
  BRASA_UNARY_METHOD(tan)
  BRASA_UNARY_METHOD(asin)
  BRASA_UNARY_METHOD(acos)
  BRASA_UNARY_METHOD(atan)
  BRASA_UNARY_METHOD(sinh)
  BRASA_UNARY_METHOD(cosh)
  BRASA_UNARY_METHOD(tanh)
  BRASA_UNARY_METHOD(sigmoid)
  BRASA_UNARY_METHOD(relu)
  BRASA_UNARY_METHOD(erf)
  BRASA_UNARY_METHOD(erfinv)
  BRASA_UNARY_METHOD(floor)
  BRASA_UNARY_METHOD(ceil)
  BRASA_UNARY_METHOD(round)
  BRASA_UNARY_METHOD(trunc)
  BRASA_UNARY_METHOD(frac)
  BRASA_UNARY_METHOD(square)
#undef BRASA_UNARY_METHOD

  // libtorch's method spellings of functions (ops/aliases.h, special.h,
  // math_extra.h, ...): each calls the function of the same name.
  Tensor absolute() const;
  Tensor acosh() const;
  Tensor asinh() const;
  Tensor atanh() const;
  Tensor arccos() const;
  Tensor arccosh() const;
  Tensor arcsin() const;
  Tensor arcsinh() const;
  Tensor arctan() const;
  Tensor arctanh() const;
  Tensor erfc() const;
  Tensor lgamma() const;
  Tensor i0() const;
  Tensor sinc() const;
  Tensor fix() const;
  Tensor deg2rad() const;
  Tensor rad2deg() const;
  Tensor signbit() const;
  Tensor isposinf() const;
  Tensor isneginf() const;
  Tensor positive() const;
  Tensor negative() const;
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor arctan2(const Tensor& other) const;
  Tensor copysign(const Tensor& other) const;
  Tensor divide(const Tensor& other) const;
  Tensor multiply(const Tensor& other) const;
  Tensor subtract(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor true_divide(const Tensor& other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor fmax(const Tensor& other) const;
  Tensor fmin(const Tensor& other) const;
  Tensor gcd(const Tensor& other) const;
  Tensor lcm(const Tensor& other) const;
  Tensor hypot(const Tensor& other) const;
  Tensor ldexp(const Tensor& other) const;
  Tensor logaddexp(const Tensor& other) const;
  Tensor logaddexp2(const Tensor& other) const;
  Tensor nextafter(const Tensor& other) const;
  Tensor xlogy(const Tensor& other) const;
  Tensor heaviside(const Tensor& values) const;
  Tensor float_power(const Tensor& exponent) const;
  Tensor greater(const Tensor& other) const;
  Tensor greater_equal(const Tensor& other) const;
  Tensor less(const Tensor& other) const;
  Tensor less_equal(const Tensor& other) const;
  Tensor not_equal(const Tensor& other) const;
  Tensor bitwise_left_shift(const Tensor& other) const;
  Tensor bitwise_right_shift(const Tensor& other) const;
  Tensor clip(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clip_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor digamma() const;
  Tensor polygamma(int64_t n) const;
  Tensor mvlgamma(int64_t p) const;
  // In-place forms of the spellings above: the result copied into this
  // tensor (autograd records the copy).
  Tensor& absolute_();
  Tensor& acosh_();
  Tensor& asinh_();
  Tensor& atanh_();
  Tensor& arccos_();
  Tensor& arccosh_();
  Tensor& arcsin_();
  Tensor& arcsinh_();
  Tensor& arctan_();
  Tensor& arctanh_();
  Tensor& erfc_();
  Tensor& lgamma_();
  Tensor& digamma_();
  Tensor& i0_();
  Tensor& sinc_();
  Tensor& fix_();
  Tensor& deg2rad_();
  Tensor& rad2deg_();
  Tensor& negative_();
  Tensor& logit_(std::optional<double> eps = std::nullopt);
  Tensor& polygamma_(int64_t n);
  Tensor& mvlgamma_(int64_t p);
  Tensor& arctan2_(const Tensor& other);
  Tensor& copysign_(const Tensor& other);
  Tensor& divide_(const Tensor& other);
  Tensor& multiply_(const Tensor& other);
  Tensor& subtract_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& true_divide_(const Tensor& other);
  Tensor& floor_divide_(const Tensor& other);
  Tensor& gcd_(const Tensor& other);
  Tensor& lcm_(const Tensor& other);
  Tensor& hypot_(const Tensor& other);
  Tensor& ldexp_(const Tensor& other);
  Tensor& xlogy_(const Tensor& other);
  Tensor& heaviside_(const Tensor& values);
  Tensor& nextafter_(const Tensor& other);
  Tensor& greater_(const Tensor& other);
  Tensor& greater_equal_(const Tensor& other);
  Tensor& less_(const Tensor& other);
  Tensor& less_equal_(const Tensor& other);
  Tensor& not_equal_(const Tensor& other);
  std::tuple<Tensor, Tensor> frexp() const;
  bool is_same_size(const Tensor& other) const;
  // New tensors with this one's dtype and device (unless options say otherwise).
  Tensor new_empty(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_zeros(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_ones(IntArrayRef size, const TensorOptions& options = {}) const;
  Tensor new_full(IntArrayRef size, const Scalar& fill_value,
                  const TensorOptions& options = {}) const;

  // ---- reductions ----
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  // The all-elements forms take exactly a bool, so that var({0}) and var(0)
  // reduce over dim 0 (in libtorch they silently pick `unbiased`).
  Tensor var() const { return var_all(true); }
  template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Tensor var(B unbiased) const {
    return var_all(unbiased);
  }
  Tensor var(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std() const { return std_all(true); }
  template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Tensor std(B unbiased) const {
    return std_all(unbiased);
  }
  Tensor std(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor var_all(bool unbiased) const;
  Tensor std_all(bool unbiased) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(std::optional<Scalar> p, IntArrayRef dim, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor& cumsum_(int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
  Tensor logcumsumexp(int64_t dim) const;
  Tensor igamma(const Tensor& other) const;
  Tensor igammac(const Tensor& other) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1,
                                  bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  // The lower (tril) or upper (triu) triangle of the last two dims.
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor& tril_(int64_t diagonal = 0);
  Tensor& triu_(int64_t diagonal = 0);
  Tensor repeat(IntArrayRef repeats) const;
  Tensor tile(IntArrayRef dims) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value);
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha = 1) const;
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source,
                     const Scalar& alpha = 1);
  // reduce: "sum", "prod", "mean", "amax" or "amin" (ops/scatter_reduce.h).
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self = true) const;
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                          const std::string& reduce, bool include_self = true);
  Tensor index_reduce(int64_t dim, const Tensor& index, const Tensor& source,
                      const std::string& reduce, bool include_self = true) const;
  Tensor& index_reduce_(int64_t dim, const Tensor& index, const Tensor& source,
                        const std::string& reduce, bool include_self = true);
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source);
  Tensor index_fill(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Tensor& value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Scalar& value);
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Tensor& value);
  // The elements at flat indices of the input as if it were 1-D (take), and
  // their replacement or accumulation (put).
  Tensor take(const Tensor& index) const;
  Tensor put(const Tensor& index, const Tensor& source, bool accumulate = false) const;
  Tensor& put_(const Tensor& index, const Tensor& source, bool accumulate = false);
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;
  Tensor argwhere() const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  Tensor select_scatter(const Tensor& src, int64_t dim, int64_t index) const;
  Tensor slice_scatter(const Tensor& src, int64_t dim = 0,
                       std::optional<int64_t> start = std::nullopt,
                       std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor diagonal_scatter(const Tensor& src, int64_t offset = 0, int64_t dim1 = 0,
                          int64_t dim2 = 1) const;
  Tensor bincount(const std::optional<Tensor>& weights = {}, int64_t minlength = 0) const;
  Tensor histc(int64_t bins = 100, double min = 0, double max = 0) const;
  Tensor count_nonzero(std::optional<int64_t> dim = std::nullopt) const;
  Tensor nansum() const;
  Tensor nanmean() const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  Tensor nanmedian() const;
  std::tuple<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> cummax(int64_t dim) const;
  std::tuple<Tensor, Tensor> cummin(int64_t dim) const;
  std::tuple<Tensor, Tensor> aminmax(std::optional<int64_t> dim = std::nullopt,
                                     bool keepdim = false) const;
  Tensor msort() const;
  Tensor diff(int64_t n = 1, int64_t dim = -1, const std::optional<Tensor>& prepend = {},
              const std::optional<Tensor>& append = {}) const;
  Tensor ravel() const;
  Tensor fliplr() const;
  Tensor flipud() const;
  Tensor rot90(int64_t k = 1, IntArrayRef dims = {0, 1}) const;
  Tensor moveaxis(int64_t source, int64_t destination) const;
  Tensor swapaxes(int64_t axis0, int64_t axis1) const;
  Tensor swapdims(int64_t dim0, int64_t dim1) const;
  Tensor broadcast_to(IntArrayRef size) const;
  std::vector<Tensor> tensor_split(int64_t sections, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(IntArrayRef indices, int64_t dim = 0) const;
  std::vector<Tensor> hsplit(int64_t sections) const;
  std::vector<Tensor> vsplit(int64_t sections) const;
  std::vector<Tensor> dsplit(int64_t sections) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                           std::optional<int64_t> output_size = std::nullopt) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor diagflat(int64_t offset = 0) const;
  Tensor trace() const;
  Tensor cross(const Tensor& other, std::optional<int64_t> dim = std::nullopt) const;
  Tensor dist(const Tensor& other, const Scalar& p = 2) const;
  Tensor inner(const Tensor& other) const;
  Tensor vdot(const Tensor& other) const;
  Tensor kron(const Tensor& other) const;
  Tensor renorm(const Scalar& p, int64_t dim, const Scalar& maxnorm) const;
  Tensor det() const;
  Tensor logdet() const;
  std::tuple<Tensor, Tensor> slogdet() const;
  Tensor inverse() const;
  Tensor pinverse(double rcond = 1e-15) const;
  Tensor matrix_exp() const;
  Tensor matrix_power(int64_t n) const;
  Tensor cholesky(bool upper = false) const;
  std::tuple<Tensor, Tensor> qr(bool some = true) const;
  std::tuple<Tensor, Tensor, Tensor> svd(bool some = true, bool compute_uv = true) const;
  Tensor corrcoef() const;
  Tensor cholesky_inverse(bool upper = false) const;
  Tensor cholesky_solve(const Tensor& input2, bool upper = false) const;
  Tensor lu_solve(const Tensor& LU_data, const Tensor& LU_pivots) const;
  std::tuple<Tensor, Tensor> triangular_solve(const Tensor& A, bool upper = true,
                                              bool transpose = false,
                                              bool unitriangular = false) const;
  std::tuple<Tensor, Tensor> geqrf() const;
  Tensor orgqr(const Tensor& input2) const;
  Tensor ormqr(const Tensor& input2, const Tensor& input3, bool left = true,
               bool transpose = false) const;
  std::tuple<Tensor, Tensor> symeig(bool eigenvectors = false, bool upper = true) const;
  Tensor cov(int64_t correction = 1, const std::optional<Tensor>& fweights = {},
             const std::optional<Tensor>& aweights = {}) const;
  Tensor quantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  Tensor quantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  Tensor nanquantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     const std::string& interpolation = "linear") const;
  Tensor nanquantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                     bool keepdim = false, const std::string& interpolation = "linear") const;
  std::tuple<Tensor, Tensor> histogram(int64_t bins = 100,
                                       std::optional<std::vector<double>> range = std::nullopt,
                                       const std::optional<Tensor>& weight = {},
                                       bool density = false) const;
  std::tuple<Tensor, Tensor> histogram(const Tensor& bins, const std::optional<Tensor>& weight = {},
                                       bool density = false) const;
  Tensor stft(int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
              const std::optional<Tensor>& window, bool normalized,
              std::optional<bool> onesided = std::nullopt,
              std::optional<bool> return_complex = std::nullopt) const;
  Tensor stft(int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
              std::optional<int64_t> win_length = std::nullopt,
              const std::optional<Tensor>& window = {}, bool center = true,
              const std::string& pad_mode = "reflect", bool normalized = false,
              std::optional<bool> onesided = std::nullopt,
              std::optional<bool> return_complex = std::nullopt) const;
  Tensor istft(int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
               std::optional<int64_t> win_length = std::nullopt,
               const std::optional<Tensor>& window = {}, bool center = true,
               bool normalized = false, std::optional<bool> onesided = std::nullopt,
               std::optional<int64_t> length = std::nullopt, bool return_complex = false) const;
  Tensor bernoulli() const;
  Tensor bernoulli(double p) const;
  Tensor multinomial(int64_t num_samples, bool replacement = false) const;

  // ---- linear algebra ----
  Tensor mm(const Tensor& o) const;
  Tensor bmm(const Tensor& o) const;
  Tensor matmul(const Tensor& o) const;
  Tensor mv(const Tensor& v) const;
  Tensor dot(const Tensor& o) const;
  Tensor outer(const Tensor& o) const;
  Tensor ger(const Tensor& o) const { return outer(o); }
  Tensor addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
               const Scalar& alpha = 1) const;
  Tensor& addmm_(const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
                 const Scalar& alpha = 1);
  Tensor addbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
                const Scalar& alpha = 1) const;
  Tensor baddbmm(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
                 const Scalar& alpha = 1) const;
  Tensor& addbmm_(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
                  const Scalar& alpha = 1);
  Tensor& baddbmm_(const Tensor& b1, const Tensor& b2, const Scalar& beta = 1,
                   const Scalar& alpha = 1);
  Tensor addmv(const Tensor& m, const Tensor& v, const Scalar& beta = 1,
               const Scalar& alpha = 1) const;
  Tensor& addmv_(const Tensor& m, const Tensor& v, const Scalar& beta = 1, const Scalar& alpha = 1);
  Tensor addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
              const Scalar& alpha = 1) const;
  Tensor& addr_(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
                const Scalar& alpha = 1);

  // ---- random (in place) ----
  Tensor& uniform_(double from = 0, double to = 1);
  Tensor& normal_(double mean = 0, double std = 1);
  Tensor& bernoulli_(double p = 0.5);
  Tensor& random_(int64_t from, int64_t to);
  Tensor& exponential_(double lambd = 1);
  Tensor& cauchy_(double median = 0, double sigma = 1);
  Tensor& log_normal_(double mean = 1, double std = 2);
  Tensor& geometric_(double p);

  // ---- storage and metadata (libtorch's spellings) ----
  // New sizes with contiguous strides (channels-last ones for that format);
  // the storage grows, keeping its bytes, when the new size needs more.
  // Not for tensors that require grad, as in libtorch.
  Tensor& resize_(IntArrayRef size, std::optional<MemoryFormat> memory_format = std::nullopt);
  Tensor& resize_as_(const Tensor& the_template,
                     std::optional<MemoryFormat> memory_format = std::nullopt);
  // Shares source's storage, sizes, strides and offset; set_() empties it.
  Tensor& set_(const Tensor& source);
  Tensor& set_();
  bool is_set_to(const Tensor& other) const;
  Tensor alias() const;
  Tensor tensor_data() const;
  Tensor variable_data() const;
  bool is_variable() const { return true; }
  Tensor to_dense(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor narrow_copy(int64_t dim, int64_t start, int64_t length) const;
  Tensor new_empty_strided(IntArrayRef size, IntArrayRef stride,
                           const TensorOptions& options = {}) const;
  Tensor as_strided_scatter(const Tensor& src, IntArrayRef size, IntArrayRef stride,
                            std::optional<int64_t> storage_offset = std::nullopt) const;
  std::vector<Tensor> unsafe_chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unsafe_split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> unsafe_split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  Tensor index_put(const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate = false) const;
  // The main diagonal (of a matrix, or of a tensor whose dims are all equal)
  // set to fill_value; wrap continues past a tall matrix's square as numpy.
  Tensor& fill_diagonal_(const Scalar& fill_value, bool wrap = false);
  Tensor& renorm_(const Scalar& p, int64_t dim, const Scalar& maxnorm);
  Tensor& cumprod_(int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
  Tensor& float_power_(const Tensor& exponent);
  Tensor& float_power_(const Scalar& exponent);
  Tensor& igamma_(const Tensor& other);
  Tensor& igammac_(const Tensor& other);
  Tensor& swapaxes_(int64_t axis0, int64_t axis1);
  Tensor& swapdims_(int64_t dim0, int64_t dim1);
  Tensor& bitwise_left_shift_(const Tensor& other);
  Tensor& bitwise_left_shift_(const Scalar& other);
  Tensor& bitwise_right_shift_(const Tensor& other);
  Tensor& bitwise_right_shift_(const Scalar& other);

  // ---- operators ----
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(const Scalar& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(const Scalar& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(const Scalar& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(const Scalar& o) { return div_(o); }
  Tensor operator-() const { return neg(); }
  Tensor operator~() const { return bitwise_not(); }

 private:
  TensorImpl* impl() const {
    if (__builtin_expect(!impl_, 0)) throw_undefined();
    return impl_.get();
  }
  [[noreturn]] static void throw_undefined();
  void check_dtype(ScalarType expected, const char* what) const;
  void check_accessor(size_t n) const;
  unsigned add_hook(std::function<Tensor(const Tensor&)> hook) const;
  intrusive_ptr<TensorImpl> impl_;
};

// Operators between tensors and scalars, both ways round.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);

// PyTorch's printed form: tensor([[ 1.0000, -0.5000]], dtype=torch.float64)
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace brasa
