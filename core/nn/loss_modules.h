#pragma once
// Loss modules and their options (torch::nn::MSELoss, CrossEntropyLoss, ...),
// and the functional spellings that take the same options
// (F::mse_loss(x, y, F::MSELossFuncOptions().reduction(torch::kSum))).
// forward(input, target) returns what the nn::functional loss does.
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>
#include <brasa/nn/module_options.h>

#include <ostream>

namespace brasa::nn {

// Options of a loss that only reduces.
#define BRASA_REDUCTION_OPTIONS(Name)                                   \
  struct Name {                                                         \
    Name(Reduction r = kMean) : reduction_(r) {} /* NOLINT: implicit */ \
    BRASA_ARG(Reduction, reduction);                                    \
  }
BRASA_REDUCTION_OPTIONS(MSELossOptions);
BRASA_REDUCTION_OPTIONS(L1LossOptions);
BRASA_REDUCTION_OPTIONS(SoftMarginLossOptions);
#undef BRASA_REDUCTION_OPTIONS

// NLLLoss and CrossEntropyLoss share F::NLLLossOptions (weight, ignore_index,
// reduction, label_smoothing).
using NLLLossOptions = functional::NLLLossOptions;
using CrossEntropyLossOptions = functional::NLLLossOptions;

struct BCELossOptions {
  BRASA_ARG(Tensor, weight);
  BRASA_ARG(Reduction, reduction, kMean);
};
struct BCEWithLogitsLossOptions {
  BRASA_ARG(Tensor, weight);
  BRASA_ARG(Tensor, pos_weight);
  BRASA_ARG(Reduction, reduction, kMean);
};
struct SmoothL1LossOptions {
  SmoothL1LossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT
  BRASA_ARG(Reduction, reduction);
  BRASA_ARG(double, beta, 1.0);
};
struct HuberLossOptions {
  HuberLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT
  BRASA_ARG(Reduction, reduction);
  BRASA_ARG(double, delta, 1.0);
};
struct KLDivLossOptions {
  KLDivLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT
  BRASA_ARG(Reduction, reduction);
  BRASA_ARG(bool, log_target, false);
};

// One loss module: its options, and forward(input, target).
#define BRASA_LOSS_MODULE(Name)                                                            \
  class Name##Impl : public Cloneable<Name##Impl> {                                        \
   public:                                                                                 \
    explicit Name##Impl(const Name##Options& options_ = {})                                \
        : Cloneable(#Name), options(options_) {}                                           \
    void reset() override {}                                                               \
    Tensor forward(const Tensor& input, const Tensor& target);                             \
    void pretty_print(std::ostream& os) const override { os << "torch::nn::" #Name "()"; } \
    Name##Options options;                                                                 \
  };                                                                                       \
  BRASA_MODULE(Name)
BRASA_LOSS_MODULE(MSELoss);
BRASA_LOSS_MODULE(L1Loss);
BRASA_LOSS_MODULE(SoftMarginLoss);
BRASA_LOSS_MODULE(NLLLoss);
BRASA_LOSS_MODULE(CrossEntropyLoss);
BRASA_LOSS_MODULE(BCELoss);
BRASA_LOSS_MODULE(BCEWithLogitsLoss);
BRASA_LOSS_MODULE(SmoothL1Loss);
BRASA_LOSS_MODULE(HuberLoss);
BRASA_LOSS_MODULE(KLDivLoss);
#undef BRASA_LOSS_MODULE

namespace functional {

using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = NLLLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using KLDivFuncOptions = KLDivLossOptions;

// (No default for the options: F::mse_loss(x, y) is the Reduction form.)
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options);
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options);
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        const SoftMarginLossFuncOptions& options = {});
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options);
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options);
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options);

}  // namespace functional

}  // namespace brasa::nn
