#include <brasa/autograd/grad_mode.h>
#include <brasa/nn/init.h>
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
Tensor constant_(Tensor t, double value) {
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

namespace {
double gain_of(const std::string& nonlinearity, double a) {
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1 + a * a));
  if (nonlinearity == "linear" || nonlinearity == "sigmoid") return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3;
  BRASA_ERROR("init: unsupported nonlinearity '", nonlinearity, "'");
}
}  // namespace

Tensor xavier_uniform_(Tensor t, double gain) {
  auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(fi + fo));
  return uniform_(std::move(t), -bound, bound);
}
Tensor xavier_normal_(Tensor t, double gain) {
  auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  return normal_(std::move(t), 0, gain * std::sqrt(2.0 / static_cast<double>(fi + fo)));
}
Tensor kaiming_uniform_(Tensor t, double a, bool fan_in_mode, const std::string& nonlinearity) {
  auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  double std = gain_of(nonlinearity, a) / std::sqrt(static_cast<double>(fan_in_mode ? fi : fo));
  double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(t), -bound, bound);
}
Tensor kaiming_normal_(Tensor t, double a, bool fan_in_mode, const std::string& nonlinearity) {
  auto [fi, fo] = calculate_fan_in_and_fan_out(t);
  return normal_(std::move(t), 0,
                 gain_of(nonlinearity, a) / std::sqrt(static_cast<double>(fan_in_mode ? fi : fo)));
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
