#include <brasa/nn/loss_modules.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/unary.h>

namespace brasa::nn {

namespace F = functional;

Tensor F::mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& o) {
  return mse_loss(input, target, o.reduction_);
}
Tensor F::l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& o) {
  return l1_loss(input, target, o.reduction_);
}
Tensor F::soft_margin_loss(const Tensor& input, const Tensor& target,
                           const SoftMarginLossFuncOptions& o) {
  BRASA_CHECK(input.sizes() == target.sizes(), "soft_margin_loss: input ", input.sizes(),
              " and target ", target.sizes(), " must have the same shape");
  Tensor per = ((-target * input).exp() + 1).log();  // log(1 + exp(-y x))
  switch (o.reduction_) {
    case Reduction::None:
      return per;
    case Reduction::Sum:
      return per.sum();
    default:
      return per.mean();
  }
}
Tensor F::binary_cross_entropy(const Tensor& input, const Tensor& target,
                               const BinaryCrossEntropyFuncOptions& o) {
  return binary_cross_entropy(input, target, o.weight_, o.reduction_);
}
Tensor F::binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                           const BinaryCrossEntropyWithLogitsFuncOptions& o) {
  return binary_cross_entropy_with_logits(input, target, o.weight_, o.pos_weight_, o.reduction_);
}
Tensor F::smooth_l1_loss(const Tensor& input, const Tensor& target,
                         const SmoothL1LossFuncOptions& o) {
  return smooth_l1_loss(input, target, o.reduction_, o.beta_);
}
Tensor F::huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& o) {
  return huber_loss(input, target, o.reduction_, o.delta_);
}
Tensor F::kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& o) {
  return kl_div(input, target, o.reduction_, o.log_target_);
}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::mse_loss(input, target, options);
}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::l1_loss(input, target, options);
}
Tensor SoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::soft_margin_loss(input, target, options);
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::nll_loss(input, target, options);
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::cross_entropy(input, target, options);
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::binary_cross_entropy(input, target, options);
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::binary_cross_entropy_with_logits(input, target, options);
}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::smooth_l1_loss(input, target, options);
}
Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::huber_loss(input, target, options);
}
Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::kl_div(input, target, options);
}

}  // namespace brasa::nn
