#pragma once
// Loss modules and their options (torch::nn::MSELoss, CrossEntropyLoss, ...),
// and the functional spellings that take the same options
// (F::mse_loss(x, y, F::MSELossFuncOptions().reduction(torch::kSum))).
// forward(input, target) returns what the nn::functional loss does.
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>
#include <brasa/nn/module_options.h>

#include <functional>
#include <optional>
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

struct MarginRankingLossOptions {
  BRASA_ARG(double, margin, 0.0);
  BRASA_ARG(Reduction, reduction, kMean);
};
struct HingeEmbeddingLossOptions {
  BRASA_ARG(double, margin, 1.0);
  BRASA_ARG(Reduction, reduction, kMean);
};
using CosineEmbeddingLossOptions = MarginRankingLossOptions;
struct TripletMarginLossOptions {
  BRASA_ARG(double, margin, 1.0);
  BRASA_ARG(double, p, 2.0);
  BRASA_ARG(double, eps, 1e-6);
  BRASA_ARG(bool, swap, false);
  BRASA_ARG(Reduction, reduction, kMean);
};
struct PoissonNLLLossOptions {
  BRASA_ARG(bool, log_input, true);
  BRASA_ARG(bool, full, false);
  BRASA_ARG(double, eps, 1e-8);
  BRASA_ARG(Reduction, reduction, kMean);
};
struct MultiLabelSoftMarginLossOptions {
  BRASA_ARG(Tensor, weight);
  BRASA_ARG(Reduction, reduction, kMean);
};
struct PairwiseDistanceOptions {
  BRASA_ARG(double, p, 2.0);
  BRASA_ARG(double, eps, 1e-6);
  BRASA_ARG(bool, keepdim, false);
};
struct CosineSimilarityOptions {
  BRASA_ARG(int64_t, dim, 1);
  BRASA_ARG(double, eps, 1e-8);
};
struct MultiMarginLossOptions {
  BRASA_ARG(int64_t, p, 1);  // 1 or 2
  BRASA_ARG(double, margin, 1.0);
  BRASA_ARG(Tensor, weight);  // per class, or undefined
  BRASA_ARG(Reduction, reduction, kMean);
};
struct MultiLabelMarginLossOptions {
  MultiLabelMarginLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT
  BRASA_ARG(Reduction, reduction);
};
struct TripletMarginWithDistanceLossOptions {
  using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
  // Undefined: the pairwise (Euclidean) distance.
  BRASA_ARG(std::optional<distance_function_t>, distance_function, std::nullopt);
  BRASA_ARG(double, margin, 1.0);
  BRASA_ARG(bool, swap, false);
  BRASA_ARG(Reduction, reduction, kMean);
};

namespace detail {
void print_options(std::ostream& os, const SmoothL1LossOptions& o);
void print_options(std::ostream& os, const HuberLossOptions& o);
void print_options(std::ostream& os, const PairwiseDistanceOptions& o);
void print_options(std::ostream& os, const CosineSimilarityOptions& o);
}  // namespace detail

// One loss module: its options, and forward(input, target).
#define BRASA_LOSS_MODULE(Name)                                  \
  class Name##Impl : public Cloneable<Name##Impl> {              \
   public:                                                       \
    explicit Name##Impl(const Name##Options& options_ = {})      \
        : Cloneable(#Name), options(options_) {}                 \
    void reset() override {}                                     \
    Tensor forward(const Tensor& input, const Tensor& target);   \
    void pretty_print(std::ostream& os) const override {         \
      detail::print_options(os << "torch::nn::" #Name, options); \
    }                                                            \
    Name##Options options;                                       \
  };                                                             \
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
BRASA_LOSS_MODULE(HingeEmbeddingLoss);
BRASA_LOSS_MODULE(PoissonNLLLoss);
BRASA_LOSS_MODULE(MultiLabelSoftMarginLoss);
BRASA_LOSS_MODULE(MultiMarginLoss);
BRASA_LOSS_MODULE(MultiLabelMarginLoss);
#undef BRASA_LOSS_MODULE

// Modules of three inputs, or of two that are not (input, target).
#define BRASA_MODULE_OF(Name, Signature)                         \
  class Name##Impl : public Cloneable<Name##Impl> {              \
   public:                                                       \
    explicit Name##Impl(const Name##Options& options_ = {})      \
        : Cloneable(#Name), options(options_) {}                 \
    void reset() override {}                                     \
    Tensor forward Signature;                                    \
    void pretty_print(std::ostream& os) const override {         \
      detail::print_options(os << "torch::nn::" #Name, options); \
    }                                                            \
    Name##Options options;                                       \
  };                                                             \
  BRASA_MODULE(Name)
BRASA_MODULE_OF(MarginRankingLoss,
                (const Tensor& input1, const Tensor& input2, const Tensor& target));
BRASA_MODULE_OF(CosineEmbeddingLoss,
                (const Tensor& input1, const Tensor& input2, const Tensor& target));
BRASA_MODULE_OF(TripletMarginLoss,
                (const Tensor& anchor, const Tensor& positive, const Tensor& negative));
BRASA_MODULE_OF(TripletMarginWithDistanceLoss,
                (const Tensor& anchor, const Tensor& positive, const Tensor& negative));
BRASA_MODULE_OF(PairwiseDistance, (const Tensor& x1, const Tensor& x2));
BRASA_MODULE_OF(CosineSimilarity, (const Tensor& x1, const Tensor& x2));
#undef BRASA_MODULE_OF

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

using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;
using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;

// Per sample: sum over the classes i != y of max(0, margin - x[y] + x[i])^p
// (times weight[y]), over the number of classes. input [N, C] or [C]; target class indices.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target,
                         const MultiMarginLossFuncOptions& options = {});
// Per sample: the hinge between every target class (the target row's
// indices up to the first -1) and every other class, over the number of classes.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options = {});
// triplet_margin_loss with a distance function of one's own.
Tensor triplet_margin_with_distance_loss(
    const Tensor& anchor, const Tensor& positive, const Tensor& negative,
    const TripletMarginWithDistanceLossFuncOptions& options = {});

// max(0, -target * (input1 - input2) + margin)
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options = {});
// input where target is 1, max(0, margin - input) where it is -1.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& options = {});
// 1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1 (rows of dim 1).
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options = {});
// max(0, margin + d(anchor, positive) - d(anchor, negative)), d the pairwise p-distance.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options = {});
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target,
                        const PoissonNLLLossFuncOptions& options = {});
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options = {});
// ||x1 - x2 + eps||_p over the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2,
                         const PairwiseDistanceFuncOptions& options = {});
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2,
                         const CosineSimilarityFuncOptions& options);

}  // namespace functional

}  // namespace brasa::nn
