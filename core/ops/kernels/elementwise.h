#pragma once
// Op codes of the elementwise families: the vocabulary that ops/binary.cpp,
// ops/unary.cpp and a device's kernels (ops/cpu/binary_kernels.cpp, ...)
// share. Each kernel reads an elementwise plan (ops/elementwise.h) whose
// inputs are already cast to the compute dtype and writes its output.
#include <brasa/ops/kernels/elementwise_ops.h>
#include <brasa/tensor/scalar.h>
#include <brasa/tensor/scalar_type.h>

#include <cstdint>
#include <optional>

namespace brasa {
namespace detail {
class Elementwise;
}

// out = a op b in the plan's compute dtype (alpha scales b for Add).
struct BinaryKernel {
  static constexpr const char* name = "binary arithmetic (add, mul, div, pow, ...)";
  using Fn = void (*)(detail::Elementwise& e, BinaryOp op, ScalarType t, const Scalar& alpha);
};
// Comparisons and logical ops: bool output, inputs in dtype t.
struct CompareKernel {
  static constexpr const char* name = "comparison (eq, lt, logical_and, ...)";
  using Fn = void (*)(detail::Elementwise& e, CompareOp op, ScalarType t);
};
struct BitwiseKernel {
  static constexpr const char* name = "bitwise_and/or/xor";
  using Fn = void (*)(detail::Elementwise& e, BitwiseOp op, ScalarType t);
};
// out = f(x), computed in dtype t (the output's dtype, or bool for predicates).
struct UnaryKernel {
  static constexpr const char* name = "unary math (exp, sin, relu, ...)";
  using Fn = void (*)(detail::Elementwise& e, UnaryOp op, ScalarType t);
};
// Inputs (start, end, weight).
struct LerpKernel {
  static constexpr const char* name = "lerp";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t);
};
// Inputs (self, t1, t2): self + value * t1 * t2 (or t1 / t2 with div).
struct AddcKernel {
  static constexpr const char* name = "addcmul/addcdiv";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, const Scalar& value, bool div);
};
// Inputs (a, cond, b): cond ? a : b.
struct WhereKernel {
  static constexpr const char* name = "where";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t);
};
struct ClampKernel {
  static constexpr const char* name = "clamp";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, const std::optional<Scalar>& lo,
                      const std::optional<Scalar>& hi);
};
// Inputs (g, x): g where lo <= x <= hi (lo < x < hi when `strict`,
// hardtanh's rule; a missing bound does not limit), else 0.
struct ClampBackwardKernel {
  static constexpr const char* name = "clamp backward";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, const std::optional<Scalar>& lo,
                      const std::optional<Scalar>& hi, bool strict);
};
struct IsCloseKernel {
  static constexpr const char* name = "isclose";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, double rtol, double atol,
                      bool equal_nan);
};
struct NanToNumKernel {
  static constexpr const char* name = "nan_to_num";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, double nan, double posinf,
                      double neginf);
};
// Inputs (g, y): g where y > 0, else 0.
struct ThresholdBackwardKernel {
  static constexpr const char* name = "threshold_backward";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t);
};

}  // namespace brasa
