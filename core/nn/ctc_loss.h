#pragma once
// The connectionist temporal classification loss (CTCLoss, F::ctc_loss,
// torch::ctc_loss): the negative log-likelihood of the target sequences
// under per-frame class log-probabilities, summed over all alignments (the
// forward-backward recursions over the targets interleaved with blanks).
// log_probs [T, N, C] (or [T, C]), targets [N, S] padded or all targets
// concatenated, input_lengths and target_lengths per sample. The gradient
// with respect to log_probs is PyTorch's: it assumes log_probs come from a
// log_softmax, through which it gives the exact gradient of the logits.
#include <brasa/nn/functional.h>
#include <brasa/nn/module.h>
#include <brasa/nn/module_options.h>
#include <brasa/tensor/tensor.h>

#include <ostream>
#include <vector>

namespace brasa::nn {

struct CTCLossOptions {
  BRASA_ARG(int64_t, blank, 0);
  BRASA_ARG(Reduction, reduction, kMean);  // kMean divides each loss by its target length
  BRASA_ARG(bool, zero_infinity, false);   // impossible alignments give 0 (and no gradient)
};

class CTCLossImpl : public Cloneable<CTCLossImpl> {
 public:
  explicit CTCLossImpl(const CTCLossOptions& options_ = {})
      : Cloneable("CTCLoss"), options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths);
  void pretty_print(std::ostream& os) const override { os << "torch::nn::CTCLoss()"; }
  CTCLossOptions options;
};
BRASA_MODULE(CTCLoss);

namespace functional {
using CTCLossFuncOptions = CTCLossOptions;
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& options = {});
}  // namespace functional

}  // namespace brasa::nn

namespace brasa {
// reduction as libtorch's integers (0 none, 1 mean, 2 sum) or Reduction values.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank = 0, int64_t reduction = 1,
                bool zero_infinity = false);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0, int64_t reduction = 1,
                bool zero_infinity = false);
}  // namespace brasa
