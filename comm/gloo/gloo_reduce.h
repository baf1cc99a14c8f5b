#pragma once
// The element types and reduction functions ProcessGroupGloo hands to Gloo.
// Internal to brasa_comm.

#include <brasa/comm/types.h>
#include <brasa/tensor/half.h>
#include <brasa/tensor/scalar_type.h>
#include <brasa/util/error.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>

namespace brasa::distributed::gloo_detail {

// Calls f with a value of the C++ type that holds `t`'s elements.
template <class F>
void dispatch(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Float:
      return f(float{});
    case ScalarType::Double:
      return f(double{});
    case ScalarType::Half:
      return f(Half{});
    case ScalarType::BFloat16:
      return f(BFloat16{});
    case ScalarType::Long:
      return f(int64_t{});
    case ScalarType::Int:
      return f(int32_t{});
    case ScalarType::Short:
      return f(int16_t{});
    case ScalarType::Char:
      return f(int8_t{});
    case ScalarType::Byte:
    case ScalarType::Bool:
      return f(uint8_t{});
    default:
      break;
  }
  BRASA_ERROR("ProcessGroupGloo: dtype ", toString(t), " cannot be communicated");
}

using Func = std::function<void(void*, const void*, const void*, size_t)>;

template <class T, class Op>
Func elementwise(Op op) {
  return [op](void* out, const void* a, const void* b, size_t n) {
    auto* po = static_cast<T*>(out);
    auto* pa = static_cast<const T*>(a);
    auto* pb = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) po[i] = op(pa[i], pb[i]);
  };
}

template <class T>
Func reduce_func(ReduceOp op, bool is_bool) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    switch (op) {  // in float, as the 16-bit types have no arithmetic of their own
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        return elementwise<T>([](T a, T b) { return T(float(a) + float(b)); });
      case ReduceOp::PRODUCT:
        return elementwise<T>([](T a, T b) { return T(float(a) * float(b)); });
      case ReduceOp::MIN:
        return elementwise<T>([](T a, T b) { return T(std::min(float(a), float(b))); });
      case ReduceOp::MAX:
        return elementwise<T>([](T a, T b) { return T(std::max(float(a), float(b))); });
      default:
        break;
    }
  } else if constexpr (std::is_integral_v<T>) {
    if (is_bool) {  // as PyTorch: SUM/MAX are "any", PRODUCT/MIN are "all"
      switch (op) {
        case ReduceOp::SUM:
        case ReduceOp::MAX:
        case ReduceOp::BOR:
          return elementwise<T>([](T a, T b) { return T(a | b); });
        case ReduceOp::PRODUCT:
        case ReduceOp::MIN:
        case ReduceOp::BAND:
          return elementwise<T>([](T a, T b) { return T(a & b); });
        case ReduceOp::BXOR:
          return elementwise<T>([](T a, T b) { return T(a ^ b); });
        default:
          break;
      }
    }
    switch (op) {
      case ReduceOp::SUM:
        return elementwise<T>([](T a, T b) { return T(a + b); });
      case ReduceOp::PRODUCT:
        return elementwise<T>([](T a, T b) { return T(a * b); });
      case ReduceOp::MIN:
        return elementwise<T>([](T a, T b) { return std::min(a, b); });
      case ReduceOp::MAX:
        return elementwise<T>([](T a, T b) { return std::max(a, b); });
      case ReduceOp::BAND:
        return elementwise<T>([](T a, T b) { return T(a & b); });
      case ReduceOp::BOR:
        return elementwise<T>([](T a, T b) { return T(a | b); });
      case ReduceOp::BXOR:
        return elementwise<T>([](T a, T b) { return T(a ^ b); });
      default:
        break;
    }
  } else {
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        return elementwise<T>([](T a, T b) { return a + b; });
      case ReduceOp::PRODUCT:
        return elementwise<T>([](T a, T b) { return a * b; });
      case ReduceOp::MIN:
        return elementwise<T>([](T a, T b) { return std::min(a, b); });
      case ReduceOp::MAX:
        return elementwise<T>([](T a, T b) { return std::max(a, b); });
      default:
        break;
    }
  }
  BRASA_ERROR("ProcessGroupGloo: ReduceOp ", to_string(op), " is not defined for this dtype");
}

}  // namespace brasa::distributed::gloo_detail
