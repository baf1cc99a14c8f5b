#pragma once
// Op codes of a device's fused GELU (optional: a device without them runs
// nn::functional::gelu's composite of elementwise ops). Inputs are
// contiguous; approximate is "none" (x Phi(x)) or "tanh".
#include <brasa/tensor/tensor.h>

namespace brasa {

struct GeluKernel {
  static constexpr const char* name = "gelu";
  using Fn = Tensor (*)(const Tensor& x, bool tanh_approximation);
};
// grad * gelu'(x).
struct GeluBackwardKernel {
  static constexpr const char* name = "gelu backward";
  using Fn = Tensor (*)(const Tensor& grad, const Tensor& x, bool tanh_approximation);
};

}  // namespace brasa
