#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/functional.h>
#include <brasa/nn/init.h>
#include <brasa/nn/sequence_modules.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/random.h>
#include <brasa/ops/shape.h>

#include <cmath>

namespace brasa::nn::init {

Tensor uniform_(Tensor t, double a, double b) {
  NoGradGuard g;
  t.uniform_(a, b);
  return t;
}
Tensor normal_(Tensor t, double mean, double std) {
  NoGradGuard g;
  t.normal_(mean, std);
  return t;
}
Tensor constant_(Tensor t, const Scalar& value) {
  NoGradGuard g;
  t.fill_(value);
  return t;
}
Tensor ones_(Tensor t) { return constant_(std::move(t), 1.0); }
Tensor zeros_(Tensor t) { return constant_(std::move(t), 0.0); }

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  BRASA_CHECK(
      t.dim() >= 2,
      "init: fan in and fan out can not be computed for tensor with fewer than 2 dimensions (",
      "shape ", t.sizes(), ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

NonlinearityType::NonlinearityType(ActivationKind a) {
  BRASA_CHECK(a != ActivationKind::GELU, "init: calculate_gain knows no gain for GELU (PyTorch's ",
              "nonlinearities: linear, conv1d..3d, conv_transpose1d..3d, sigmoid, tanh, relu, ",
              "leaky_relu)");
  kind_ = a == ActivationKind::Tanh ? Nonlinearity::Tanh : Nonlinearity::ReLU;
}
NonlinearityType::NonlinearityType(InterpolateMode m) : kind_(Nonlinearity::Linear) {
  BRASA_CHECK(m == InterpolateMode::Linear, "init: an interpolation mode is not a nonlinearity ",
              "(torch::kLinear is the one that doubles as both)");
}

double calculate_gain(NonlinearityType nonlinearity, double param) {
  switch (nonlinearity.kind()) {
    case Nonlinearity::Tanh:
      return 5.0 / 3;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU:
      return std::sqrt(2.0 / (1 + param * param));
    default:  // linear, the convolutions, sigmoid
      return 1.0;
  }
}

std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& t) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return {fan_in, fan_out};
}

Tensor xavier_uniform_(Tensor t, double gain) {
  auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(fi + fo));
  return uniform_(std::move(t), -bound, bound);
}
Tensor xavier_normal_(Tensor t, double gain) {
  auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  return normal_(std::move(t), 0, gain * std::sqrt(2.0 / static_cast<double>(fi + fo)));
}
Tensor kaiming_uniform_(Tensor t, double a, FanModeType mode, NonlinearityType nonlinearity) {
  auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  double std =
      calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(mode == kFanIn ? fi : fo));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(t), -bound, bound);
}
Tensor kaiming_normal_(Tensor t, double a, FanModeType mode, NonlinearityType nonlinearity) {
  auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  return normal_(
      std::move(t), 0,
      calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(mode == kFanIn ? fi : fo)));
}

Tensor dirac_(Tensor t) {
  BRASA_CHECK(t.dim() >= 3 && t.dim() <= 5, "dirac_: Only tensors with 3, 4, or 5 dimensions ",
              "are supported, got shape ", t.sizes());
  NoGradGuard g;
  t.zero_();
  const int64_t channels = std::min(t.size(0), t.size(1));
  for (int64_t c = 0; c < channels; ++c) {
    Tensor tap = t.select(0, c).select(0, c);  // [k...]
    while (tap.dim() > 0) tap = tap.select(0, tap.size(0) / 2);
    tap.fill_(1);
  }
  return t;
}

Tensor eye_(Tensor t) {
  BRASA_CHECK(t.dim() == 2, "eye_: Only tensors with 2 dimensions are supported, got shape ",
              t.sizes());
  NoGradGuard g;
  t.copy_(eye(t.size(0), t.size(1), t.options()));
  return t;
}

Tensor sparse_(Tensor t, double sparsity, double std) {
  BRASA_CHECK(t.dim() == 2, "sparse_: Only tensors with 2 dimensions are supported, got shape ",
              t.sizes());
  BRASA_CHECK(sparsity >= 0 && sparsity <= 1, "sparse_: sparsity must be in [0, 1], got ",
              sparsity);
  NoGradGuard g;
  const int64_t rows = t.size(0), columns = t.size(1);
  const auto zeros = static_cast<int64_t>(std::ceil(sparsity * static_cast<double>(rows)));
  t.normal_(0, std);
  for (int64_t c = 0; c < columns; ++c) {
    Tensor rows_to_zero = randperm(rows, TensorOptions().dtype(kLong)).narrow(0, 0, zeros);
    t.select(1, c).index_fill_(0, rows_to_zero.to(t.device()), 0);
  }
  return t;
}

Tensor orthogonal_(Tensor t, double gain) {
  BRASA_CHECK(t.dim() >= 2,
              "orthogonal_: only tensors with 2 or more dimensions are supported, got shape ",
              t.sizes());
  const int64_t rows = t.size(0), cols = t.numel() / std::max<int64_t>(rows, 1);
  const bool transpose = rows < cols;
  const int64_t m = transpose ? cols : rows, n = transpose ? rows : cols;  // m >= n
  Tensor a = randn({m, n}, TensorOptions().dtype(kDouble)).contiguous();
  double* q = a.data_ptr<double>();
  // Modified Gram-Schmidt on the columns; R's diagonal sign is folded into Q
  // (as PyTorch multiplies Q by sign(diag(R))), which MGS gives positive.
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < j; ++k) {
      double dot = 0;
      for (int64_t i = 0; i < m; ++i) dot += q[i * n + k] * q[i * n + j];
      for (int64_t i = 0; i < m; ++i) q[i * n + j] -= dot * q[i * n + k];
    }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i) norm += q[i * n + j] * q[i * n + j];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i) q[i * n + j] /= norm;
  }
  Tensor result = (transpose ? a.t() : a) * gain;
  NoGradGuard g;
  t.copy_(result.reshape(t.sizes()));
  return t;
}

void default_layer_init_(Tensor weight, Tensor bias) {
  kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in = calculate_fan_in_and_fan_out(weight).first;
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  init::uniform_(bias, -bound, bound);
}

}  // namespace brasa::nn::init
