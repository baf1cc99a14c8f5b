#pragma once
// Op codes of a device's fused activations (optional: a device without them
// runs nn::functional's composites of elementwise ops). GELU's inputs are
// contiguous; approximate is "none" (x Phi(x)) or "tanh".
#include <brasa/tensor/scalar_type.h>
#include <brasa/tensor/tensor.h>

namespace brasa {
namespace detail {
class Elementwise;
}

struct GeluKernel {
  static constexpr const char* name = "gelu";
  using Fn = Tensor (*)(const Tensor& x, bool tanh_approximation);
};
// grad * gelu'(x).
struct GeluBackwardKernel {
  static constexpr const char* name = "gelu backward";
  using Fn = Tensor (*)(const Tensor& grad, const Tensor& x, bool tanh_approximation);
};

// Elementwise plans (ops/elementwise.h) of floating dtypes. Input (x):
// x > 0 ? x : x * negative_slope.
struct LeakyReluKernel {
  static constexpr const char* name = "leaky_relu";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, double negative_slope);
};
// Inputs (grad, x): x > 0 ? grad : grad * negative_slope.
struct LeakyReluBackwardKernel {
  static constexpr const char* name = "leaky_relu backward";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, double negative_slope);
};

}  // namespace brasa
