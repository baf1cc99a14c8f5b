#pragma once
// Small names libtorch programs use unqualified under torch:: (c10's str,
// optional, ExpandingArray, the short dtype names, the check macros).
#include <brasa/tensor/scalar_type.h>
#include <brasa/util/array_ref.h>
#include <brasa/util/error.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace brasa {

// c10::str: its arguments written one after another into a string.
template <class... Args>
std::string str(const Args&... args) {
  return detail::str(args...);
}

template <class T>
using optional = std::optional<T>;
using std::nullopt;
using std::nullopt_t;

// torch::kU8 ... kF64: the short dtype names of torch/types.h.
constexpr ScalarType kU8 = ScalarType::Byte, kI8 = ScalarType::Char, kI16 = ScalarType::Short,
                     kI32 = ScalarType::Int, kI64 = ScalarType::Long, kF16 = ScalarType::Half,
                     kBF16 = ScalarType::BFloat16, kF32 = ScalarType::Float,
                     kF64 = ScalarType::Double;

// D values of T given as one value (repeated D times) or as exactly D values
// — kernel sizes, strides, paddings of a D-dimensional layer.
template <size_t D, class T = int64_t>
class ExpandingArray {
 public:
  ExpandingArray(T single) { values_.fill(single); }  // NOLINT: implicit, as in libtorch
  ExpandingArray(std::initializer_list<T> list) : ExpandingArray(std::vector<T>(list)) {}
  ExpandingArray(const std::vector<T>& v) {  // NOLINT
    BRASA_CHECK(v.size() == D, "ExpandingArray: expected ", D, " values, got ", v.size());
    std::copy(v.begin(), v.end(), values_.begin());
  }
  ExpandingArray(ArrayRef<T> v) : ExpandingArray(v.vec()) {}  // NOLINT
  ExpandingArray(const std::array<T, D>& v) : values_(v) {}   // NOLINT
  std::array<T, D>& operator*() { return values_; }
  const std::array<T, D>& operator*() const { return values_; }
  std::array<T, D>* operator->() { return &values_; }
  const std::array<T, D>* operator->() const { return &values_; }
  operator ArrayRef<T>() const { return ArrayRef<T>(values_.data(), D); }  // NOLINT
  size_t size() const noexcept { return D; }

 private:
  std::array<T, D> values_;
};

namespace detail {
// TORCH_CHECK's message: its arguments, or which condition failed.
template <class... Args>
std::string torch_check_message(const char* cond, const Args&... args) {
  if constexpr (sizeof...(Args) == 0)
    return str("Expected ", cond, " to be true, but got false.");
  else
    return str(args...);
}
}  // namespace detail

}  // namespace brasa

// libtorch's check macros: the condition, then the parts of the message.
#define TORCH_CHECK(cond, ...) \
  BRASA_CHECK(cond, ::brasa::detail::torch_check_message(#cond, ##__VA_ARGS__))
#define TORCH_INTERNAL_ASSERT(cond, ...) BRASA_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define AT_ASSERT(cond, ...) BRASA_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#define AT_ERROR(...) BRASA_ERROR(__VA_ARGS__)
