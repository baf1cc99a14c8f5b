#pragma once
#include <brasa/tensor/half.h>
#include <brasa/util/error.h>

#include <complex>
#include <cstdint>
#include <ostream>

namespace brasa {

enum class ScalarType : int8_t {
  Byte,
  Char,
  Short,
  Int,
  Long,
  Half,
  Float,
  Double,
  Bool,
  BFloat16,
  ComplexFloat,   // std::complex<float>
  ComplexDouble,  // std::complex<double>
  Undefined
};

constexpr ScalarType kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char, kInt8 = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short, kInt16 = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int, kInt32 = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long, kInt64 = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half, kFloat16 = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float, kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double, kFloat64 = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat;
constexpr ScalarType kComplexDouble = ScalarType::ComplexDouble;

size_t elementSize(ScalarType t);
const char* toString(ScalarType t);     // "Float"
const char* python_name(ScalarType t);  // "torch.float32"
inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

inline bool isFloatingType(ScalarType t) {
  return t == kFloat || t == kDouble || t == kHalf || t == kBFloat16;
}
inline bool isComplexType(ScalarType t) { return t == kComplexFloat || t == kComplexDouble; }
// The type of a complex type's real and imaginary parts (a real type itself).
inline ScalarType toRealValueType(ScalarType t) {
  return t == kComplexFloat ? kFloat : t == kComplexDouble ? kDouble : t;
}
// The complex type with parts of floating type t (complex itself).
ScalarType toComplexType(ScalarType t);
inline bool isIntegralType(ScalarType t, bool includeBool) {
  return t == kByte || t == kChar || t == kShort || t == kInt || t == kLong ||
         (includeBool && t == kBool);
}
// PyTorch's promote_types: the smallest type both convert to without losing category.
ScalarType promoteTypes(ScalarType a, ScalarType b);

template <class T>
struct CppTypeToScalarType;
#define BRASA_TYPE_MAP(T, S)               \
  template <>                              \
  struct CppTypeToScalarType<T> {          \
    static constexpr ScalarType value = S; \
  };
BRASA_TYPE_MAP(uint8_t, kByte)
BRASA_TYPE_MAP(int8_t, kChar)
BRASA_TYPE_MAP(int16_t, kShort)
BRASA_TYPE_MAP(int32_t, kInt)
BRASA_TYPE_MAP(int64_t, kLong)
BRASA_TYPE_MAP(Half, kHalf)
BRASA_TYPE_MAP(float, kFloat)
BRASA_TYPE_MAP(double, kDouble)
BRASA_TYPE_MAP(bool, kBool)
BRASA_TYPE_MAP(BFloat16, kBFloat16)
BRASA_TYPE_MAP(std::complex<float>, kComplexFloat)
BRASA_TYPE_MAP(std::complex<double>, kComplexDouble)
#undef BRASA_TYPE_MAP

// Dispatch: runs the lambda body with `scalar_t` bound to the C++ type of `t`.
#define BRASA_DISPATCH_CASE(S, T, ...) \
  case S: {                            \
    using scalar_t = T;                \
    return __VA_ARGS__();              \
  }
#define BRASA_DISPATCH_FAIL(t, name) \
  default:                           \
    BRASA_ERROR(name, ": not implemented for dtype ", t);

#define BRASA_DISPATCH_FLOATING_TYPES(t, name, ...)                           \
  [&] {                                                                       \
    switch (t) {                                                              \
      BRASA_DISPATCH_CASE(::brasa::kFloat, float, __VA_ARGS__)                \
      BRASA_DISPATCH_CASE(::brasa::kDouble, double, __VA_ARGS__)              \
      BRASA_DISPATCH_CASE(::brasa::kHalf, ::brasa::Half, __VA_ARGS__)         \
      BRASA_DISPATCH_CASE(::brasa::kBFloat16, ::brasa::BFloat16, __VA_ARGS__) \
      BRASA_DISPATCH_FAIL(t, name)                                            \
    }                                                                         \
  }()

#define BRASA_DISPATCH_INTEGRAL_CASES(...)                   \
  BRASA_DISPATCH_CASE(::brasa::kByte, uint8_t, __VA_ARGS__)  \
  BRASA_DISPATCH_CASE(::brasa::kChar, int8_t, __VA_ARGS__)   \
  BRASA_DISPATCH_CASE(::brasa::kShort, int16_t, __VA_ARGS__) \
  BRASA_DISPATCH_CASE(::brasa::kInt, int32_t, __VA_ARGS__)   \
  BRASA_DISPATCH_CASE(::brasa::kLong, int64_t, __VA_ARGS__)

#define BRASA_DISPATCH_INTEGRAL_TYPES(t, name, ...) \
  [&] {                                             \
    switch (t) {                                    \
      BRASA_DISPATCH_INTEGRAL_CASES(__VA_ARGS__)    \
      BRASA_DISPATCH_FAIL(t, name)                  \
    }                                               \
  }()

#define BRASA_DISPATCH_INTEGRAL_AND_BOOL(t, name, ...)       \
  [&] {                                                      \
    switch (t) {                                             \
      BRASA_DISPATCH_INTEGRAL_CASES(__VA_ARGS__)             \
      BRASA_DISPATCH_CASE(::brasa::kBool, bool, __VA_ARGS__) \
      BRASA_DISPATCH_FAIL(t, name)                           \
    }                                                        \
  }()

#define BRASA_DISPATCH_ALL_TYPES(t, name, ...)                                \
  [&] {                                                                       \
    switch (t) {                                                              \
      BRASA_DISPATCH_INTEGRAL_CASES(__VA_ARGS__)                              \
      BRASA_DISPATCH_CASE(::brasa::kFloat, float, __VA_ARGS__)                \
      BRASA_DISPATCH_CASE(::brasa::kDouble, double, __VA_ARGS__)              \
      BRASA_DISPATCH_CASE(::brasa::kHalf, ::brasa::Half, __VA_ARGS__)         \
      BRASA_DISPATCH_CASE(::brasa::kBFloat16, ::brasa::BFloat16, __VA_ARGS__) \
      BRASA_DISPATCH_FAIL(t, name)                                            \
    }                                                                         \
  }()

#define BRASA_DISPATCH_ALL_TYPES_AND_BOOL(t, name, ...)                       \
  [&] {                                                                       \
    switch (t) {                                                              \
      BRASA_DISPATCH_INTEGRAL_CASES(__VA_ARGS__)                              \
      BRASA_DISPATCH_CASE(::brasa::kFloat, float, __VA_ARGS__)                \
      BRASA_DISPATCH_CASE(::brasa::kDouble, double, __VA_ARGS__)              \
      BRASA_DISPATCH_CASE(::brasa::kHalf, ::brasa::Half, __VA_ARGS__)         \
      BRASA_DISPATCH_CASE(::brasa::kBFloat16, ::brasa::BFloat16, __VA_ARGS__) \
      BRASA_DISPATCH_CASE(::brasa::kBool, bool, __VA_ARGS__)                  \
      BRASA_DISPATCH_FAIL(t, name)                                            \
    }                                                                         \
  }()

// The type arithmetic on scalar_t is carried out in: float for 16-bit floats.
template <class T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <class T>
using opmath_t = typename OpMath<T>::type;

// Value conversion between storage types. Floating -> integral goes through
// int64 so that negative values wrap as in PyTorch instead of being undefined.
template <class D, class S>
inline D convert(S v) {
  using SM = opmath_t<S>;
  if constexpr (std::is_same_v<D, bool>) {
    return static_cast<SM>(v) != SM(0);
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<SM>) {
    return static_cast<D>(static_cast<int64_t>(static_cast<SM>(v)));
  } else {
    return static_cast<D>(static_cast<SM>(v));
  }
}

}  // namespace brasa
