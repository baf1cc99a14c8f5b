#include <brasa/nn/activations.h>
#include <brasa/nn/aten_functions.h>
#include <brasa/ops/binary.h>

namespace brasa {

namespace F = nn::functional;

ReductionArg::ReductionArg(int64_t r) {
  BRASA_CHECK(r >= 0 && r <= 2, "reduction: expected 0 (None), 1 (Mean) or 2 (Sum), got ", r);
  value = r == 0 ? Reduction::None : r == 1 ? Reduction::Mean : Reduction::Sum;
}

namespace {
Tensor or_undefined(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
}  // namespace

Tensor dropout(const Tensor& input, double p, bool train) { return F::dropout(input, p, train); }

Tensor feature_dropout(const Tensor& input, double p, bool train) {
  return F::dropout2d(input, p, train);
}

Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                ReductionArg reduction, int64_t ignore_index) {
  return F::nll_loss(self, target,
                     F::NLLLossOptions()
                         .weight(or_undefined(weight))
                         .reduction(reduction.value)
                         .ignore_index(ignore_index));
}

Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight, ReductionArg reduction,
                          int64_t ignore_index, double label_smoothing) {
  return F::cross_entropy(self, target,
                          F::NLLLossOptions()
                              .weight(or_undefined(weight))
                              .reduction(reduction.value)
                              .ignore_index(ignore_index)
                              .label_smoothing(label_smoothing));
}

Tensor mse_loss(const Tensor& self, const Tensor& target, ReductionArg reduction) {
  return F::mse_loss(self, target, reduction.value);
}

Tensor l1_loss(const Tensor& self, const Tensor& target, ReductionArg reduction) {
  return F::l1_loss(self, target, reduction.value);
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, ReductionArg reduction,
                      double beta) {
  return F::smooth_l1_loss(self, target, reduction.value, beta);
}

Tensor huber_loss(const Tensor& self, const Tensor& target, ReductionArg reduction, double delta) {
  return F::huber_loss(self, target, reduction.value, delta);
}

Tensor binary_cross_entropy(const Tensor& self, const Tensor& target,
                            const std::optional<Tensor>& weight, ReductionArg reduction) {
  return F::binary_cross_entropy(self, target, or_undefined(weight), reduction.value);
}

Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight,
                                        ReductionArg reduction) {
  return F::binary_cross_entropy_with_logits(self, target, or_undefined(weight),
                                             or_undefined(pos_weight), reduction.value);
}

Tensor kl_div(const Tensor& self, const Tensor& target, ReductionArg reduction, bool log_target) {
  return F::kl_div(self, target, reduction.value, log_target);
}

Tensor gelu(const Tensor& self, const std::string& approximate) {
  return F::gelu(self, approximate);
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps, bool) {
  return F::layer_norm(input, normalized_shape, or_undefined(weight), or_undefined(bias), eps);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool) {
  return F::group_norm(input, num_groups, or_undefined(weight), or_undefined(bias), eps);
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  BRASA_CHECK(!sparse, "embedding: sparse gradients are not supported (sparse=true)");
  BRASA_CHECK(!scale_grad_by_freq, "embedding: scale_grad_by_freq=true is not supported");
  // at::embedding: -1 means no padding row (negative rows are normalized by its callers).
  std::optional<int64_t> pad;
  if (padding_idx != -1) pad = padding_idx;
  return F::embedding(indices, weight, pad);
}

Tensor pad(const Tensor& self, IntArrayRef pad, const std::string& mode,
           std::optional<double> value) {
  F::PadFuncOptions o(pad.vec());
  if (mode == "constant")
    o.mode(kConstant).value(value.value_or(0.0));
  else if (mode == "reflect")
    o.mode(kReflect);
  else if (mode == "replicate")
    o.mode(kReplicate);
  else if (mode == "circular")
    o.mode(kCircular);
  else
    BRASA_ERROR("pad: unknown mode '", mode,
                "' (expected 'constant', 'reflect', 'replicate' or 'circular')");
  BRASA_CHECK(mode == "constant" || !value, "pad: padding mode \"", mode,
              "\" doesn't take in value argument");
  return F::pad(self, o);
}

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, double value) {
  return F::pad(self, pad, value);
}

Tensor threshold(const Tensor& self, double threshold, double value) {
  return F::threshold(self, F::ThresholdFuncOptions(threshold, value));
}

Tensor hardtanh(const Tensor& self, double min_val, double max_val) {
  return F::hardtanh(self, min_val, max_val);
}

Tensor leaky_relu(const Tensor& self, double negative_slope) {
  return F::leaky_relu(self, negative_slope);
}
Tensor elu(const Tensor& self, double alpha) { return F::elu(self, alpha); }
Tensor selu(const Tensor& self) { return F::selu(self); }
Tensor silu(const Tensor& self) { return F::silu(self); }
Tensor mish(const Tensor& self) { return F::mish(self); }
Tensor softplus(const Tensor& self, double beta, double threshold) {
  return F::softplus(self, beta, threshold);
}
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  return F::cosine_similarity(x1, x2, dim, eps);
}

}  // namespace brasa
