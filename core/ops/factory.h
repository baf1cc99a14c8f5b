#pragma once
// Tensor factories: empty, zeros, ones, full, arange, linspace, eye, tensor({...}),
// from_blob and the *_like forms.
#include <brasa/tensor/tensor.h>

#include <functional>
#include <initializer_list>
#include <vector>

namespace brasa {

Tensor empty(IntArrayRef size, const TensorOptions& options = {});
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, const TensorOptions& options = {});
Tensor zeros(IntArrayRef size, const TensorOptions& options = {});
Tensor ones(IntArrayRef size, const TensorOptions& options = {});
Tensor full(IntArrayRef size, const Scalar& value, const TensorOptions& options = {});
Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {});
Tensor empty_like(const Tensor& t, const TensorOptions& options = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& options = {});
Tensor ones_like(const Tensor& t, const TensorOptions& options = {});
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& options = {});
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& options = {});
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0,
                const TensorOptions& options = {});
Tensor eye(int64_t n, const TensorOptions& options = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {});

// Wraps memory the caller owns (zero-copy); `deleter` runs when the last
// tensor using it goes away.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides,
                 const std::function<void(void*)>& deleter, const TensorOptions& options = {});

// A nested list of numbers, for tensor({{1, 2}, {3, 4}}).
class NestedList {
 public:
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  NestedList(T v) : scalar_(v), is_scalar_(true) {}
  NestedList(Half v) : scalar_(v), is_scalar_(true) {}
  NestedList(BFloat16 v) : scalar_(v), is_scalar_(true) {}
  NestedList(std::initializer_list<NestedList> items) : items_(items) {}
  template <class T>
  NestedList(const std::vector<T>& v) {
    for (const auto& x : v) items_.push_back(NestedList(x));
  }
  bool is_scalar() const { return is_scalar_; }
  const Scalar& scalar() const { return scalar_; }
  const std::vector<NestedList>& items() const { return items_; }

 private:
  Scalar scalar_;
  bool is_scalar_ = false;
  std::vector<NestedList> items_;
};

// Integers give int64, floating numbers the default dtype, bools bool.
Tensor tensor(const NestedList& values, const TensorOptions& options = {});
Tensor tensor(std::initializer_list<NestedList> values, const TensorOptions& options = {});
namespace detail {
// A 1-D tensor of n values of C++ type `type` at `data`, copied in one pass
// and then cast: integers keep their own dtype (a vector<int> gives kInt, as
// in libtorch), floating numbers take the default dtype, unless options say
// otherwise.
Tensor tensor_from_values(const void* data, int64_t n, ScalarType type,
                          const TensorOptions& options);
}  // namespace detail
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Tensor tensor(ArrayRef<T> values, const TensorOptions& options = {}) {
  // Boxing each value in a NestedList cost 475 ns a value (a bag's 40960
  // row ids took 19 ms); types with a dtype of their own are copied at once.
  if constexpr (requires { CppTypeToScalarType<T>::value; } && !std::is_same_v<T, bool>)
    return detail::tensor_from_values(values.data(), static_cast<int64_t>(values.size()),
                                      CppTypeToScalarType<T>::value, options);
  else
    return tensor(NestedList(values.vec()), options);
}
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {}) {
  if constexpr (std::is_same_v<T, bool>)
    return tensor(NestedList(values), options);
  else
    return tensor(ArrayRef<T>(values), options);
}

}  // namespace brasa
