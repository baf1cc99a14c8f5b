#pragma once
// Op codes of a device's fused activations (optional: a device without them
// runs nn::functional's composites of elementwise ops). GELU's inputs are
// contiguous; approximate is "none" (x Phi(x)) or "tanh".
#include <brasa/tensor/scalar_type.h>

#include <cstdint>
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

// The smooth activations that run as one elementwise pass each way
// (floating dtypes). Elu is scale * (x > 0 ? x : alpha * (e^(input_scale x)
// - 1)), which covers SELU; Silu x sigmoid(x); Mish x tanh(softplus(x));
// Hardswish x relu6(x + 3) / 6; Softplus log(1 + e^(beta x)) / beta (x
// itself where beta x > threshold).
enum class Activation : uint8_t { Elu, Silu, Mish, Hardswish, Softplus };
struct ActivationParams {
  double alpha = 1, scale = 1, input_scale = 1;  // Elu
  double beta = 1, threshold = 20;               // Softplus
};
// Input (x): f(x).
struct ActivationKernel {
  static constexpr const char* name = "activation (elu, silu, mish, hardswish, softplus)";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, Activation a,
                      const ActivationParams& p);
};
// Inputs (grad, x): grad * f'(x).
struct ActivationBackwardKernel {
  static constexpr const char* name = "activation backward (elu, silu, mish, hardswish, softplus)";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, Activation a,
                      const ActivationParams& p);
};

// sigmoid's and tanh's gradients from their output y (floating dtypes).
// Inputs (grad, y): grad * y (1 - y) and grad * (1 - y^2).
enum class OutputActivation : uint8_t { Sigmoid, Tanh };
struct OutputActivationBackwardKernel {
  static constexpr const char* name = "sigmoid/tanh backward";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, OutputActivation a);
};

// The elementwise regression losses of d = input - target: SmoothL1 is
// |d| < beta ? d^2 / (2 beta) : |d| - beta / 2, Huber |d| < delta ? d^2 / 2 :
// delta (|d| - delta / 2); `param` is beta or delta (> 0).
enum class PointwiseLoss : uint8_t { SmoothL1, Huber };
// Inputs (input, target): the loss of each element.
struct PointwiseLossKernel {
  static constexpr const char* name = "smooth_l1/huber loss";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, PointwiseLoss l, double param);
};
// Inputs (grad, input, target): grad times the loss's derivative in input.
struct PointwiseLossBackwardKernel {
  static constexpr const char* name = "smooth_l1/huber loss backward";
  using Fn = void (*)(detail::Elementwise& e, ScalarType t, PointwiseLoss l, double param);
};

// PReLU over a contiguous input seen as [N, C, S] with one slope per
// channel (C = 1: one slope for all): y = x > 0 ? x : slope * x.
struct PreluKernel {
  static constexpr const char* name = "prelu";
  using Fn = void (*)(const Tensor& x, const Tensor& weight, const Tensor& y, int64_t N, int64_t C,
                      int64_t S);
};
// Its gradients: gx = grad * (x > 0 ? 1 : slope), and gw[c] the sum of
// grad * x over channel c's elements where x <= 0 (contiguous, like x and
// weight).
struct PreluBackwardKernel {
  static constexpr const char* name = "prelu backward";
  using Fn = void (*)(const Tensor& grad, const Tensor& x, const Tensor& weight, const Tensor& gx,
                      const Tensor& gw, int64_t N, int64_t C, int64_t S);
};

}  // namespace brasa
