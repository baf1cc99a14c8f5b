#pragma once
// Scalar: a number of any dtype passed to an op (libtorch's c10::Scalar).
#include <brasa/tensor/scalar_type.h>

#include <cstdint>
#include <type_traits>

namespace brasa {

class Scalar {
 public:
  Scalar() : Scalar(int64_t(0)) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : tag_(Tag::Int), i_(static_cast<int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : tag_(Tag::Double), d_(static_cast<double>(v)) {}
  Scalar(bool v) : tag_(Tag::Bool), i_(v) {}
  Scalar(Half v) : tag_(Tag::Double), d_(static_cast<float>(v)) {}
  Scalar(BFloat16 v) : tag_(Tag::Double), d_(static_cast<float>(v)) {}

  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  bool isIntegral(bool includeBool) const {
    return tag_ == Tag::Int || (includeBool && tag_ == Tag::Bool);
  }
  bool isBoolean() const { return tag_ == Tag::Bool; }
  // The dtype PyTorch gives a tensor made from this number.
  ScalarType type() const {
    return tag_ == Tag::Double ? kDouble : tag_ == Tag::Bool ? kBool : kLong;
  }

  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return tag_ == Tag::Double ? d_ != 0 : i_ != 0;
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return T(static_cast<float>(toDouble()));
    } else {
      return tag_ == Tag::Double ? static_cast<T>(d_) : static_cast<T>(i_);
    }
  }
  double toDouble() const { return tag_ == Tag::Double ? d_ : static_cast<double>(i_); }
  float toFloat() const { return static_cast<float>(toDouble()); }
  int64_t toLong() const { return tag_ == Tag::Double ? static_cast<int64_t>(d_) : i_; }
  int toInt() const { return static_cast<int>(toLong()); }
  bool toBool() const { return to<bool>(); }
  Scalar operator-() const { return tag_ == Tag::Double ? Scalar(-d_) : Scalar(-i_); }

 private:
  enum class Tag : uint8_t { Double, Int, Bool } tag_;
  union {
    double d_;
    int64_t i_;
  };
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace brasa
