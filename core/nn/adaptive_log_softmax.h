#pragma once
// AdaptiveLogSoftmaxWithLoss (Grave et al.'s adaptive softmax): the frequent
// classes (below cutoffs[0]) and one entry per cluster of rarer classes share
// a head; each cluster has its own smaller projection (in_features /
// div_value^(i + 1) wide), so that large vocabularies cost less.
#include <brasa/nn/modules.h>

#include <ostream>
#include <vector>

namespace brasa::nn {

struct AdaptiveLogSoftmaxWithLossOptions {
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes,  // NOLINT: implicit
                                    std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  BRASA_ARG(int64_t, in_features);
  BRASA_ARG(int64_t, n_classes);
  BRASA_ARG(std::vector<int64_t>, cutoffs);
  BRASA_ARG(double, div_value, 4.0);
  BRASA_ARG(bool, head_bias, false);
};

// What forward gives: each sample's log-probability of its target, and the
// mean negative of those as a number (libtorch's); loss_tensor is the same
// loss as a differentiable tensor.
struct ASMoutput {
  ASMoutput(Tensor output_, double loss_) : output(std::move(output_)), loss(loss_) {}
  Tensor output;
  double loss;
  Tensor loss_tensor;
};

class AdaptiveLogSoftmaxWithLossImpl : public Cloneable<AdaptiveLogSoftmaxWithLossImpl> {
 public:
  AdaptiveLogSoftmaxWithLossImpl(int64_t in_features, int64_t n_classes,
                                 std::vector<int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLossImpl(
            AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs))) {}
  explicit AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options_);
  AdaptiveLogSoftmaxWithLossImpl(const AdaptiveLogSoftmaxWithLossImpl& o)
      : AdaptiveLogSoftmaxWithLossImpl(o.options) {}
  // input [N, in_features] (or [in_features]), target [N] (or []).
  ASMoutput forward(const Tensor& input, const Tensor& target);
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  // log-probabilities of every class [N, n_classes].
  Tensor _get_full_log_prob(const Tensor& input, const Tensor& head_output);
  Tensor log_prob(const Tensor& input);
  // The most likely class of each sample.
  Tensor predict(const Tensor& input);

  AdaptiveLogSoftmaxWithLossOptions options;
  std::vector<int64_t> cutoffs;  // the options' cutoffs, then n_classes
  int64_t shortlist_size, n_clusters, head_size;
  Linear head = nullptr;
  ModuleList tail;
};
BRASA_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace brasa::nn
