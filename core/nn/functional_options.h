#pragma once
// The option structs that libtorch's nn::functional calls take
// (F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)),
// F::dropout(x, F::DropoutFuncOptions().p(0.3).training(false)), ...) and
// the overloads taking them. Included by <brasa/nn/functional.h>.
#include <brasa/nn/functional.h>
#include <brasa/nn/module_options.h>

#include <optional>
#include <vector>

namespace brasa::nn {

struct ReLU6Options {
  ReLU6Options(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as libtorch's
  BRASA_ARG(bool, inplace);
};
using SELUOptions = ReLU6Options;

namespace functional {

using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using SELUFuncOptions = SELUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using GELUFuncOptions = GELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using HardtanhFuncOptions = HardtanhOptions;

// F::softmax / F::log_softmax: the dim, and optionally the dtype the input
// is cast to first.
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  BRASA_ARG(int64_t, dim);
  BRASA_ARG(std::optional<ScalarType>, dtype, std::nullopt);
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;

// Dropout as a function: the probability, whether in training (on by
// default, unlike the alpha dropouts) and in place.
struct DropoutFuncOptions {
  BRASA_ARG(double, p, 0.5);
  BRASA_ARG(bool, training, true);
  BRASA_ARG(bool, inplace, false);
};
using Dropout2dFuncOptions = DropoutFuncOptions;

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape)  // NOLINT
      : normalized_shape_(std::move(normalized_shape)) {}
  BRASA_ARG(std::vector<int64_t>, normalized_shape);
  BRASA_ARG(Tensor, weight);
  BRASA_ARG(Tensor, bias);
  BRASA_ARG(double, eps, 1e-5);
};
struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  BRASA_ARG(int64_t, num_groups);
  BRASA_ARG(Tensor, weight);
  BRASA_ARG(Tensor, bias);
  BRASA_ARG(double, eps, 1e-5);
};
struct BatchNormFuncOptions {
  BRASA_ARG(Tensor, weight);
  BRASA_ARG(Tensor, bias);
  BRASA_ARG(bool, training, false);
  BRASA_ARG(std::optional<double>, momentum, 0.1);
  BRASA_ARG(double, eps, 1e-5);
};
struct NormalizeFuncOptions {
  BRASA_ARG(double, p, 2.0);
  BRASA_ARG(int64_t, dim, 1);
  BRASA_ARG(double, eps, 1e-12);
  // Where to write the result (as div_out: not differentiable).
  BRASA_ARG(std::optional<Tensor>, out, std::nullopt);
};
struct EmbeddingFuncOptions {
  BRASA_ARG(std::optional<int64_t>, padding_idx, std::nullopt);
  BRASA_ARG(std::optional<double>, max_norm, std::nullopt);
  BRASA_ARG(double, norm_type, 2.0);
  BRASA_ARG(bool, scale_grad_by_freq, false);
  BRASA_ARG(bool, sparse, false);
};
struct EmbeddingBagFuncOptions {
  // Getters, as libtorch's options have: options.name().
  const auto& mode() const noexcept { return mode_; }
  BRASA_ARG(Tensor, offsets);
  BRASA_ARG(std::optional<double>, max_norm, std::nullopt);
  BRASA_ARG(double, norm_type, 2.0);
  BRASA_ARG(bool, scale_grad_by_freq, false);
  BRASA_ARG(bool, sparse, false);
  BRASA_ARG(Tensor, per_sample_weights);
  BRASA_ARG(bool, include_last_offset, false);
  BRASA_ARG(std::optional<int64_t>, padding_idx, std::nullopt);
  EmbeddingBagMode mode_ = EmbeddingBagMode::Mean;
  EmbeddingBagFuncOptions& mode(EmbeddingBagMode m) {
    mode_ = m;
    return *this;
  }
  EmbeddingBagFuncOptions& mode(Reduction r);  // torch::kSum / torch::kMean
};

// No defaults here: the plain forms (F::relu(x), F::elu(x, 1.0)) keep theirs.
Tensor relu(const Tensor& x, const ReLUFuncOptions& options);
Tensor relu6(const Tensor& x, const ReLU6FuncOptions& options);
Tensor selu(const Tensor& x, const SELUFuncOptions& options);
Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& options);
Tensor elu(const Tensor& x, const ELUFuncOptions& options);
Tensor gelu(const Tensor& x, const GELUFuncOptions& options);
Tensor softplus(const Tensor& x, const SoftplusFuncOptions& options);
Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& options);
Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& options);
Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& options);
Tensor dropout(const Tensor& x, const DropoutFuncOptions& options);
Tensor dropout2d(const Tensor& x, const Dropout2dFuncOptions& options);
Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& options);
Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& options);
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options);
Tensor normalize(const Tensor& x, const NormalizeFuncOptions& options);
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options);
Tensor embedding_bag(const Tensor& input, const Tensor& weight,
                     const EmbeddingBagFuncOptions& options);

namespace detail {
// With inplace, y is written into x and x returned (libtorch's inplace options).
Tensor apply_inplace(const Tensor& x, const Tensor& y, bool inplace);
}  // namespace detail

}  // namespace functional
}  // namespace brasa::nn
