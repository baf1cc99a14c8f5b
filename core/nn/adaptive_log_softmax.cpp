#include <brasa/nn/adaptive_log_softmax.h>
#include <brasa/ops/arrange.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/indexing.h>
#include <brasa/ops/reduction.h>
#include <brasa/ops/shape.h>

#include <algorithm>
#include <cmath>

namespace brasa::nn {

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(
    AdaptiveLogSoftmaxWithLossOptions options_)
    : Cloneable("AdaptiveLogSoftmaxWithLoss"), options(std::move(options_)) {
  const auto& c = options.cutoffs_;
  bool valid = !c.empty() && std::is_sorted(c.begin(), c.end()) && c.front() > 0 &&
               c.back() <= options.n_classes_ - 1 &&
               std::adjacent_find(c.begin(), c.end()) == c.end();
  BRASA_CHECK(valid,
              "cutoffs should be a sequence of unique, positive integers sorted in an increasing "
              "order, where each value is between 1 and n_classes-1");
  BRASA_CHECK(options.in_features_ > 0 && options.div_value_ > 0,
              "AdaptiveLogSoftmaxWithLoss: in_features and div_value must be positive");
  cutoffs = c;
  cutoffs.push_back(options.n_classes_);
  shortlist_size = cutoffs[0];
  n_clusters = static_cast<int64_t>(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;
  head = register_module(
      "head", Linear(LinearOptions(options.in_features_, head_size).bias(options.head_bias_)));
  tail = register_module("tail", ModuleList());
  for (int64_t i = 0; i < n_clusters; ++i) {
    const auto hidden = static_cast<int64_t>(
        std::floor(options.in_features_ / std::pow(options.div_value_, i + 1)));
    const int64_t out = cutoffs[i + 1] - cutoffs[i];
    tail->push_back(Sequential(Linear(LinearOptions(options.in_features_, hidden).bias(false)),
                               Linear(LinearOptions(hidden, out).bias(false))));
  }
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
  head->reset_parameters();
  for (const auto& cluster : *tail)
    for (const auto& m : cluster->children())
      if (auto linear = std::dynamic_pointer_cast<LinearImpl>(m)) linear->reset_parameters();
}

void AdaptiveLogSoftmaxWithLossImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::AdaptiveLogSoftmaxWithLoss";
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_, const Tensor& target_) {
  const char* op = "AdaptiveLogSoftmaxWithLoss";
  BRASA_CHECK(input_.defined() && target_.defined(), op, ": expected defined input and target");
  const int64_t targ_dim = target_.dim();
  if (targ_dim == 1) {
    BRASA_CHECK(input_.dim() == 2 && input_.size(0) == target_.size(0),
                "Input and target should have the same size in the batch dimension.");
  } else if (targ_dim == 0) {
    BRASA_CHECK(input_.dim() == 1,
                "0D target tensor expects 1D input tensors, but found inputs "
                "with size ",
                input_.sizes());
  } else {
    BRASA_ERROR("0D or 1D target tensor expected, multi-target not supported");
  }
  const bool batched = targ_dim > 0;
  Tensor input = batched ? input_ : input_.unsqueeze(0);
  Tensor target = (batched ? target_ : target_.unsqueeze(0)).to(kLong);
  BRASA_CHECK(input.size(1) == options.in_features_, op, ": expected input with ",
              options.in_features_, " features, got ", input.sizes());
  const int64_t batch = target.size(0);
  Tensor output = zeros({batch}, input.options());
  // Which head entry each sample's target goes through: the class itself
  // (shortlist) or its cluster's entry.
  Tensor head_index = target.clone();
  int64_t used = 0;
  for (int64_t i = 0; i < n_clusters + 1; ++i) {
    const int64_t low = i == 0 ? 0 : cutoffs[i - 1], high = cutoffs[i];
    Tensor mask = (target >= low).logical_and(target < high);
    Tensor rows = nonzero(mask).reshape({-1});
    if (rows.numel() == 0) continue;
    used += rows.numel();
    if (i == 0) continue;
    Tensor relative = index_select(target, 0, rows) - low;
    Tensor cluster = tail->ptr<SequentialImpl>(i - 1)->forward(index_select(input, 0, rows));
    Tensor local = log_softmax(cluster, 1).gather(1, relative.unsqueeze(1)).squeeze(1);
    head_index = index_fill(head_index, 0, rows, shortlist_size + i - 1);
    output = index_put(output, {rows}, local);
  }
  if (used != batch) {
    BRASA_ERROR("Target values should be in [0, ", options.n_classes_ - 1,
                "], but values in range [", target.min().item<int64_t>(), ", ",
                target.max().item<int64_t>(), "] were found. ");
  }
  Tensor head_logprob = log_softmax(head->forward(input), 1);
  output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1);
  Tensor loss = (-output).mean();
  ASMoutput result(batched ? output : output.squeeze(0), loss.item<double>());
  result.loss_tensor = loss;
  return result;
}

Tensor AdaptiveLogSoftmaxWithLossImpl::_get_full_log_prob(const Tensor& input,
                                                          const Tensor& head_output) {
  Tensor head_logprob = log_softmax(head_output, 1);
  std::vector<Tensor> parts{head_logprob.narrow(1, 0, shortlist_size)};
  for (int64_t i = 0; i < n_clusters; ++i) {
    Tensor cluster = log_softmax(tail->ptr<SequentialImpl>(i)->forward(input), 1);
    parts.push_back(cluster + head_logprob.narrow(1, shortlist_size + i, 1));
  }
  return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input) {
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor out = _get_full_log_prob(x, head->forward(x));
  return batched ? out : out.squeeze(0);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input) {
  return log_prob(input).argmax(-1);
}

}  // namespace brasa::nn
