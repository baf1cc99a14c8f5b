// CTCLoss / F::ctc_loss / torch::ctc_loss (nn/ctc_loss.h) against PyTorch's
// losses and gradients; their error paths.
#include <brasa/torch.h>

#include "../ops/golden_util.h"
#include "../test_util.h"

namespace {

using namespace brasa;
namespace F = torch::nn::functional;
using golden::expect_golden;
using golden::L;
using golden::S;

Tensor log_probs() { return F::log_softmax(S({6, 3, 5}, 0.9, 0.3) * 2, 2); }

TEST(CTCLoss, MatchesPyTorch) {
  Tensor padded = L({1, 2, 2, 0, 3, 1, 0, 0, 2, 0, 0, 0}).view({3, 4});
  expect_golden("ctc_none", F::ctc_loss(log_probs(), padded, L({6, 5, 4}), L({3, 2, 0}),
                                        F::CTCLossFuncOptions().reduction(torch::kNone)));
  expect_golden(
      "ctc_mean_blank",
      torch::nn::CTCLoss()(log_probs(), L({1, 2, 0, 0, 3, 4, 4, 0, 2, 0, 0, 0}).view({3, 4}),
                           L({6, 5, 4}), L({2, 3, 1})));
  expect_golden("ctc_sum_concat_blank2",
                torch::ctc_loss(log_probs(), L({1, 3, 3, 4, 0, 1}), {6, 6, 3}, {3, 2, 1}, 2, 2));
  // An impossible alignment (four equal labels need seven frames) is infinite, or 0.
  Tensor repeated = L({1, 1, 1, 1, 3, 1, 0, 0, 2, 0, 0, 0}).view({3, 4});
  EXPECT_TRUE(std::isinf(
      torch::ctc_loss(log_probs(), repeated, L({6, 5, 4}), L({4, 2, 1}), 0, 0)[0].item<double>()));
  expect_golden("ctc_zero_infinity",
                F::ctc_loss(log_probs(), repeated, L({6, 5, 4}), L({4, 2, 1}),
                            F::CTCLossFuncOptions().reduction(torch::kNone).zero_infinity(true)));
  // Unbatched: [T, C] with targets [S].
  Tensor one = torch::ctc_loss(log_probs().select(1, 0), L({1, 2, 2}), L({6}), L({3}), 0, 0);
  EXPECT_EQ(one.dim(), 0);
  EXPECT_NEAR(one.item<double>(), 8.651041729188178, 1e-10);
}

TEST(CTCLoss, GradientsMatchPyTorch) {
  // PyTorch's gradient in log_probs assumes a log_softmax before it; through
  // it, the logits get the exact gradient.
  Tensor logits = (S({6, 3, 5}, 0.9, 0.3) * 2).requires_grad_();
  Tensor lp = F::log_softmax(logits, 2);
  lp.retain_grad();
  F::ctc_loss(lp, L({1, 2, 2, 0, 3, 1, 0, 0, 2, 0, 0, 0}).view({3, 4}), L({6, 5, 4}), L({3, 2, 0}))
      .backward();
  expect_golden("ctc_grads", torch::cat({lp.grad().flatten(), logits.grad().flatten()}));
}

TEST(CTCLoss, BadInputGetsClearErrors) {
  Tensor padded = L({1, 2, 0, 0}).view({1, 4});
  EXPECT_ERROR("Expected input_lengths to have value at most 6, but got value 7",
               torch::ctc_loss(log_probs().narrow(1, 0, 1), padded, {7}, {2}));
  EXPECT_ERROR("blank must be in label range",
               torch::ctc_loss(log_probs().narrow(1, 0, 1), padded, {6}, {2}, 5));
  EXPECT_ERROR("input_lengths must be of size batch_size (1)",
               torch::ctc_loss(log_probs().narrow(1, 0, 1), padded, {6, 6}, {2}));
  EXPECT_ERROR("Expected tensor to have size at least 5 at dimension 1",
               torch::ctc_loss(log_probs().narrow(1, 0, 1), padded, {6}, {5}));
  EXPECT_ERROR("target label 0 of sample 0 is out of range or the blank",
               torch::ctc_loss(log_probs().narrow(1, 0, 1), padded, {6}, {3}));
  EXPECT_ERROR("ctc_loss: expected log_probs [T, N, C] or [T, C]",
               torch::ctc_loss(S({2}), padded, {6}, {2}));
}

}  // namespace

namespace {

using namespace brasa;

TEST(CTCLoss, MoreBadInputGetsClearErrors) {
  Tensor lp = golden::S({6, 1, 5});
  EXPECT_ERROR("ctc_loss: target_lengths must be non-negative, got -1",
               torch::ctc_loss(lp, golden::L({1, 2}).view({1, 2}), {6}, {-1}));
  EXPECT_ERROR("the concatenated targets hold 2 labels, fewer than the target_lengths add up to",
               torch::ctc_loss(lp, golden::L({1, 2}), {6}, {3}));
  EXPECT_ERROR("ctc_loss: expected floating-point log_probs, got Long",
               torch::ctc_loss(golden::L({1, 2, 3}).view({3, 1, 1}), golden::L({1}), {3}, {1}));
  EXPECT_ERROR("ctc_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got 3",
               torch::ctc_loss(lp, golden::L({1}), {6}, {1}, 0, 3));
  EXPECT_ERROR("ctc_loss: expected input_lengths as a 1-D tensor of integers",
               torch::ctc_loss(lp, golden::L({1}), golden::L({6}).view({1, 1}), golden::L({1})));
}

}  // namespace
