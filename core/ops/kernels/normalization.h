#pragma once
// Op codes of a device's fused batch norm in training mode (optional: a
// device without them runs nn::functional::batch_norm's composite of
// reductions and elementwise ops). x is [N, C, ...]; the per-channel tensors
// are [C] in the statistics dtype (float, or double for double inputs).
#include <brasa/tensor/tensor.h>

#include <tuple>

namespace brasa {

// Returns (y, saved mean, saved inverse std) and, when running_mean and
// running_var are defined, updates them with `momentum` (the unbiased
// variance goes into running_var, as in PyTorch).
struct BatchNormKernel {
  static constexpr const char* name = "batch_norm";
  using Fn = std::tuple<Tensor, Tensor, Tensor> (*)(const Tensor& x, const Tensor& weight,
                                                    const Tensor& bias, const Tensor& running_mean,
                                                    const Tensor& running_var, double momentum,
                                                    double eps);
};
// Returns (grad_input, grad_weight, grad_bias) from the forward's saved statistics.
struct BatchNormBackwardKernel {
  static constexpr const char* name = "batch_norm backward";
  using Fn = std::tuple<Tensor, Tensor, Tensor> (*)(const Tensor& grad_out, const Tensor& x,
                                                    const Tensor& weight, const Tensor& save_mean,
                                                    const Tensor& save_invstd, double eps);
};

// Layer norm over the last `row` values of a contiguous x ([rows, row]):
// returns (y, mean [rows], rstd [rows]), the statistics in x's dtype; weight
// and bias ([row], contiguous) may be undefined.
struct LayerNormKernel {
  static constexpr const char* name = "layer_norm";
  using Fn = std::tuple<Tensor, Tensor, Tensor> (*)(const Tensor& x, int64_t row,
                                                    const Tensor& weight, const Tensor& bias,
                                                    double eps);
};
// Returns (grad_input, grad_weight, grad_bias); the last two are undefined
// without a weight.
struct LayerNormBackwardKernel {
  static constexpr const char* name = "layer_norm backward";
  using Fn = std::tuple<Tensor, Tensor, Tensor> (*)(const Tensor& grad_out, const Tensor& x,
                                                    int64_t row, const Tensor& mean,
                                                    const Tensor& rstd, const Tensor& weight);
};

// Group norm of a contiguous x [N, C, S] (float or double) in G groups of
// C / G channels, then each channel's weight and bias (C values, either may
// be undefined): returns (y, mean [N, G], rstd [N, G]).
struct GroupNormKernel {
  static constexpr const char* name = "group_norm";
  using Fn = std::tuple<Tensor, Tensor, Tensor> (*)(const Tensor& x, int64_t G,
                                                    const Tensor& weight, const Tensor& bias,
                                                    double eps);
};
// Returns (grad_input, grad_weight, grad_bias), the last two [C] (the
// weight's gradient undefined without a weight).
struct GroupNormBackwardKernel {
  static constexpr const char* name = "group_norm backward";
  using Fn = std::tuple<Tensor, Tensor, Tensor> (*)(const Tensor& grad_out, const Tensor& x,
                                                    int64_t G, const Tensor& mean,
                                                    const Tensor& rstd, const Tensor& weight);
};

// Local response normalization across the channels of a contiguous x seen
// as [N, C, S]: scale = k + alpha / size * (the sum of x^2 over channels
// c - size / 2 .. c + (size - 1) / 2, zeros past the ends), y = x *
// scale^-beta. Fills y, and scale and scale^-beta for the backward.
// Optional: a device without it runs nn::functional::local_response_norm's
// composite.
struct LocalResponseNormKernel {
  static constexpr const char* name = "local_response_norm";
  using Fn = void (*)(const Tensor& x, const Tensor& y, const Tensor& scale, const Tensor& power,
                      int64_t N, int64_t C, int64_t S, int64_t size, double alpha, double beta,
                      double k);
};
// grad_x from grad_y and the forward's x, scale and power = scale^-beta (all
// contiguous): grad_y * power - 2 alpha beta / size * x * (the sum of
// grad_y * x * power / scale over the channels whose windows hold c).
struct LocalResponseNormBackwardKernel {
  static constexpr const char* name = "local_response_norm backward";
  using Fn = void (*)(const Tensor& grad_y, const Tensor& x, const Tensor& scale,
                      const Tensor& power, const Tensor& grad_x, int64_t N, int64_t C, int64_t S,
                      int64_t size, double alpha, double beta);
};

}  // namespace brasa
