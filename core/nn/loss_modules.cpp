#include <brasa/nn/activations.h>
#include <brasa/nn/loss_modules.h>
#include <brasa/ops/binary.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>

#include <cmath>
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
  // log(1 + exp(-y x))
  return detail::reduce_loss(((-target * input).exp() + 1).log(), o.reduction_);
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

Tensor F::margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                              const MarginRankingLossFuncOptions& o) {
  return detail::reduce_loss((-target * (input1 - input2) + o.margin_).clamp_min(0), o.reduction_);
}

Tensor F::hinge_embedding_loss(const Tensor& input, const Tensor& target,
                               const HingeEmbeddingLossFuncOptions& o) {
  Tensor margin_part = where(target.ne(1), (o.margin_ - input).clamp_min(0), Scalar(0.0));
  Tensor self_part = where(target.ne(-1), input, Scalar(0.0));
  return detail::reduce_loss(margin_part + self_part, o.reduction_);
}

Tensor F::cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                                const CosineEmbeddingLossFuncOptions& o) {
  BRASA_CHECK(input1.sizes() == input2.sizes(), "cosine_embedding_loss: the inputs ",
              input1.sizes(), " and ", input2.sizes(), " must have the same shape");
  const int64_t d = input1.dim() - 1;
  constexpr double kEps = 1e-12;
  Tensor dot = (input1 * input2).sum({d});
  Tensor mag1 = (input1 * input1).sum({d}) + kEps, mag2 = (input2 * input2).sum({d}) + kEps;
  Tensor cos = dot / (mag1 * mag2).sqrt();
  Tensor loss = where(target.eq(1), 1 - cos, Scalar(0.0)) +
                where(target.eq(-1), (cos - o.margin_).clamp_min(0), Scalar(0.0));
  return detail::reduce_loss(loss, o.reduction_);
}

Tensor F::pairwise_distance(const Tensor& x1, const Tensor& x2,
                            const PairwiseDistanceFuncOptions& o) {
  const int64_t d = std::max(x1.dim(), x2.dim()) - 1;
  return (x1 - x2 + o.eps_).norm(Scalar(o.p_), {d}, o.keepdim_);
}

Tensor F::cosine_similarity(const Tensor& x1, const Tensor& x2,
                            const CosineSimilarityFuncOptions& o) {
  return cosine_similarity(x1, x2, o.dim_, o.eps_);
}

Tensor F::triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                              const TripletMarginLossFuncOptions& o) {
  auto d = [&](const Tensor& a, const Tensor& b) {
    return pairwise_distance(a, b, PairwiseDistanceFuncOptions().p(o.p_).eps(o.eps_));
  };
  Tensor d_ap = d(anchor, positive), d_an = d(anchor, negative);
  if (o.swap_) d_an = minimum(d_an, d(positive, negative));
  return detail::reduce_loss((o.margin_ + d_ap - d_an).clamp_min(0), o.reduction_);
}

Tensor F::poisson_nll_loss(const Tensor& input, const Tensor& target,
                           const PoissonNLLLossFuncOptions& o) {
  Tensor loss =
      o.log_input_ ? input.exp() - target * input : input - target * (input + o.eps_).log();
  if (o.full_) {  // Stirling's approximation of log(target!), where target > 1
    Tensor stirling = target * target.log() - target + (2 * M_PI * target).log() * 0.5;
    loss = loss + where(target > 1, stirling, Scalar(0.0));
  }
  return detail::reduce_loss(loss, o.reduction_);
}

Tensor F::multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                      const MultilabelSoftMarginLossFuncOptions& o) {
  BRASA_CHECK(input.dim() == 2 && input.sizes() == target.sizes(),
              "multilabel_soft_margin_loss: expected input and target of one shape [N, C], got ",
              input.sizes(), " and ", target.sizes());
  Tensor loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input));
  if (o.weight_.defined()) loss = loss * o.weight_;
  loss = loss.sum({1}) / input.size(1);
  return detail::reduce_loss(loss, o.reduction_);
}

Tensor MarginRankingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                      const Tensor& target) {
  return F::margin_ranking_loss(input1, input2, target, options);
}
Tensor CosineEmbeddingLossImpl::forward(const Tensor& input1, const Tensor& input2,
                                        const Tensor& target) {
  return F::cosine_embedding_loss(input1, input2, target, options);
}
Tensor TripletMarginLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                      const Tensor& negative) {
  return F::triplet_margin_loss(anchor, positive, negative, options);
}
Tensor PairwiseDistanceImpl::forward(const Tensor& x1, const Tensor& x2) {
  return F::pairwise_distance(x1, x2, options);
}
Tensor CosineSimilarityImpl::forward(const Tensor& x1, const Tensor& x2) {
  return F::cosine_similarity(x1, x2, options);
}
Tensor HingeEmbeddingLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::hinge_embedding_loss(input, target, options);
}
Tensor PoissonNLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::poisson_nll_loss(input, target, options);
}
Tensor MultiLabelSoftMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::multilabel_soft_margin_loss(input, target, options);
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

Tensor F::multi_margin_loss(const Tensor& input, const Tensor& target,
                            const MultiMarginLossFuncOptions& o) {
  BRASA_CHECK(o.p_ == 1 || o.p_ == 2, "multi_margin_loss: only p == 1 and p == 2 supported, got ",
              o.p_);
  BRASA_CHECK(input.defined() && target.defined() && (input.dim() == 1 || input.dim() == 2),
              "multi_margin_loss: expected input [N, C] or [C], got ",
              input.defined() ? input.sizes() : IntArrayRef{});
  Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  Tensor y = target.reshape({-1});
  const int64_t C = x.size(1);
  BRASA_CHECK(y.numel() == x.size(0) && target.dim() <= 1,
              "multi_margin_loss: inconsistent target size: ", target.sizes(),
              " for input of size: ", input.sizes());
  BRASA_CHECK(!o.weight_.defined() || (o.weight_.dim() == 1 && o.weight_.size(0) == C),
              "multi_margin_loss: expected weight of shape [", C, "], got ", o.weight_.sizes());
  Tensor picked = x.gather(1, y.unsqueeze(1));  // x[y], [N, 1]
  Tensor hinge = (x - picked + o.margin_).clamp_min(0);
  if (o.p_ == 2) hinge = hinge * hinge;
  if (o.weight_.defined()) hinge = hinge * o.weight_.index_select(0, y).unsqueeze(1);
  // The target class itself is left out.
  Tensor not_target = ones_like(x).scatter(1, y.unsqueeze(1), 0.0);
  Tensor per = (hinge * not_target).sum({1}) / static_cast<double>(C);
  return detail::reduce_loss(input.dim() == 1 ? per.squeeze(0) : per, o.reduction_);
}

Tensor F::multilabel_margin_loss(const Tensor& input, const Tensor& target,
                                 const MultilabelMarginLossFuncOptions& o) {
  BRASA_CHECK(input.defined() && target.defined() && (input.dim() == 1 || input.dim() == 2) &&
                  target.sizes() == input.sizes() && target.scalar_type() == kLong,
              "multilabel_margin_loss: expected input [N, C] or [C] and an int64 target of its "
              "shape, got ",
              input.defined() ? input.sizes() : IntArrayRef{}, " and ",
              target.defined() ? target.sizes() : IntArrayRef{});
  Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  Tensor y = (input.dim() == 1 ? target.unsqueeze(0) : target).to(kCPU).contiguous();
  const int64_t N = x.size(0), C = x.size(1);
  // is_target[n, c]: c appears in row n before its first -1.
  Tensor is_target = zeros({N, C}, TensorOptions().dtype(kDouble));
  const int64_t* py = y.data_ptr<int64_t>();
  double* pt = is_target.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 0; j < C && py[n * C + j] >= 0; ++j) {
      const int64_t c = py[n * C + j];
      BRASA_CHECK(c < C, "multilabel_margin_loss: target ", c, " is out of range for ", C,
                  " classes");
      pt[n * C + c] = 1;
    }
  Tensor tmask = is_target.to(x.device()).to(x.scalar_type());
  // hinge[n, j, i] = max(0, 1 - (x[n, j] - x[n, i])) for target j and non-target i.
  Tensor hinge = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0);
  Tensor pairs = tmask.unsqueeze(2) * (1 - tmask).unsqueeze(1);
  Tensor per = (hinge * pairs).sum({1, 2}) / static_cast<double>(C);
  return detail::reduce_loss(input.dim() == 1 ? per.squeeze(0) : per, o.reduction_);
}

Tensor F::triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive,
                                            const Tensor& negative,
                                            const TripletMarginWithDistanceLossFuncOptions& o) {
  BRASA_CHECK(o.margin_ > 0,
              "triplet_margin_with_distance_loss: expected margin to be greater "
              "than 0, got ",
              o.margin_, " instead");
  auto distance = o.distance_function_.value_or(
      [](const Tensor& a, const Tensor& b) { return F::pairwise_distance(a, b); });
  Tensor d_pos = distance(anchor, positive), d_neg = distance(anchor, negative);
  if (o.swap_) d_neg = minimum(d_neg, distance(positive, negative));
  return detail::reduce_loss((d_pos - d_neg + o.margin_).clamp_min(0), o.reduction_);
}

Tensor MultiMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::multi_margin_loss(input, target, options);
}
Tensor MultiLabelMarginLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::multilabel_margin_loss(input, target, options);
}
Tensor TripletMarginWithDistanceLossImpl::forward(const Tensor& anchor, const Tensor& positive,
                                                  const Tensor& negative) {
  return F::triplet_margin_with_distance_loss(anchor, positive, negative, options);
}

namespace detail {
// libtorch 1.13 prints these two without parentheses.
void print_options(std::ostream&, const SmoothL1LossOptions&) {}
void print_options(std::ostream&, const HuberLossOptions&) {}
void print_options(std::ostream& os, const PairwiseDistanceOptions& o) {
  os << "(p=" << o.p_ << ", eps=" << o.eps_ << ", keepdim=" << (o.keepdim_ ? "true" : "false")
     << ")";
}
void print_options(std::ostream& os, const CosineSimilarityOptions& o) {
  os << "(dim=" << o.dim_ << ", eps=" << o.eps_ << ")";
}
}  // namespace detail

}  // namespace brasa::nn
