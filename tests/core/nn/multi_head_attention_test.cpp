// F::multi_head_attention_forward (nn/multi_head_attention.h) and
// AdaptiveLogSoftmaxWithLoss (nn/adaptive_log_softmax.h) against PyTorch's
// outputs; their error paths. Gradients are in the gradcheck table.
#include <brasa/torch.h>

#include "../ops/golden_util.h"
#include "../test_util.h"

namespace {

using namespace brasa;
namespace F = torch::nn::functional;
using brasa::testing::printed;
using golden::expect_golden;
using golden::L;
using golden::S;
using golden::set_sequential_weights;

TEST(MultiHeadAttentionForward, MatchesPyTorch) {
  const int64_t E = 4, H = 2;
  Tensor padding = torch::tensor({0, 0, 1, 0, 0, 0, 1, 0, 0, 0}).to(kBool).view({2, 5});
  auto [out, weights] = F::multi_head_attention_forward(
      S({3, 2, E}), S({5, 2, E}, 0.5, 0.3), S({5, 2, E}, 0.7, 0.1),
      F::MultiheadAttentionForwardFuncOptions(E, H, S({3 * E, E}, 0.3, 0.2), S({3 * E}, 0.2, 0.1),
                                              S({1, 1, E}, 0.9, 0.4), S({1, 1, E}, 1.1, 0.2), true,
                                              0.0, S({E, E}, 0.6, 0.5), S({E}, 0.4, 0.3))
          .training(false)
          .key_padding_mask(padding)
          .attn_mask(S({3, 5}, 0.8, 0.1))
          .average_attn_weights(false));
  expect_golden("mha_forward_out", out);
  expect_golden("mha_forward_weights", weights);
  auto [out2, none] = F::multi_head_attention_forward(
      S({3, 2, E}), S({5, 2, E}, 0.5, 0.3), S({5, 2, E}, 0.7, 0.1),
      F::MultiheadAttentionForwardFuncOptions(E, H, {}, S({3 * E}, 0.2, 0.1), {}, {}, false, 0.0,
                                              S({E, E}, 0.6, 0.5), {})
          .training(false)
          .use_separate_proj_weight(true)
          .q_proj_weight(S({E, E}, 0.3, 0.2))
          .k_proj_weight(S({E, E}, 0.45, 0.2))
          .v_proj_weight(S({E, E}, 0.35, 0.6))
          .static_v(S({4, 5, 2}, 0.25, 0.3))
          .need_weights(false));
  expect_golden("mha_separate_static", out2);
  EXPECT_FALSE(none.defined());
  // The module is the function over its parameters.
  torch::nn::MultiheadAttention mha(E, H);
  mha->to(kDouble);
  mha->eval();
  auto [m_out, m_w] = mha->forward(S({3, 2, E}), S({5, 2, E}), S({5, 2, E}));
  auto [f_out, f_w] =
      F::multi_head_attention_forward(S({3, 2, E}), S({5, 2, E}), S({5, 2, E}),
                                      F::MultiheadAttentionForwardFuncOptions(
                                          E, H, mha->in_proj_weight, mha->in_proj_bias, {}, {},
                                          false, 0.0, mha->out_proj->weight, mha->out_proj->bias)
                                          .training(false));
  EXPECT_TRUE(torch::allclose(m_out, f_out) && torch::allclose(m_w, f_w));
}

TEST(MultiHeadAttentionForward, BadInputGetsClearErrors) {
  auto options = [] {
    return F::MultiheadAttentionForwardFuncOptions(4, 2, S({12, 4}), {}, {}, {}, false, 0.0,
                                                   S({4, 4}), {});
  };
  EXPECT_ERROR(
      "was expecting embedding dimension of 4, but got 3",
      F::multi_head_attention_forward(S({2, 1, 3}), S({2, 1, 3}), S({2, 1, 3}), options()));
  EXPECT_ERROR("attn_mask must be [2, 3] or [2, 2, 3]",
               F::multi_head_attention_forward(S({2, 1, 4}), S({3, 1, 4}), S({3, 1, 4}),
                                               options().attn_mask(S({3, 3}))));
  EXPECT_ERROR("use_separate_proj_weight is true but q_proj_weight is undefined",
               F::multi_head_attention_forward(S({2, 1, 4}), S({3, 1, 4}), S({3, 1, 4}),
                                               options().use_separate_proj_weight(true)));
}

TEST(AdaptiveLogSoftmaxWithLoss, MatchesPyTorch) {
  torch::nn::AdaptiveLogSoftmaxWithLoss asm_(
      torch::nn::AdaptiveLogSoftmaxWithLossOptions(6, 10, {3, 6}).div_value(2.0).head_bias(true));
  asm_->to(kDouble);
  set_sequential_weights(*asm_);
  auto out = asm_(S({5, 6}), L({0, 3, 5, 9, 7}));
  expect_golden("asm_output", out.output);
  EXPECT_NEAR(out.loss, -out.output.mean().item<double>(), 1e-12);
  expect_golden("asm_log_prob", asm_->log_prob(S({5, 6})));
  expect_golden("asm_predict", asm_->predict(S({5, 6}, 1.1, 0.5)).to(kDouble));
  // Parameters in libtorch's order and shapes; the loss trains them.
  std::vector<std::string> names;
  for (const auto& p : asm_->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names,
            (std::vector<std::string>{"head.weight", "head.bias", "tail.0.0.weight",
                                      "tail.0.1.weight", "tail.1.0.weight", "tail.1.1.weight"}));
  EXPECT_SHAPE(asm_->tail->ptr<torch::nn::SequentialImpl>(1)->parameters()[0], {1, 6});
  out.loss_tensor.backward();
  EXPECT_GT(asm_->head->weight.grad().abs().sum().item<double>(), 0);
  EXPECT_EQ(printed(*asm_).rfind("torch::nn::AdaptiveLogSoftmaxWithLoss", 0), 0u);
}

TEST(AdaptiveLogSoftmaxWithLoss, BadInputGetsClearErrors) {
  EXPECT_ERROR(
      "cutoffs should be a sequence of unique, positive integers sorted in an increasing "
      "order, where each value is between 1 and n_classes-1",
      torch::nn::AdaptiveLogSoftmaxWithLoss(6, 10, std::vector<int64_t>{6, 3}));
  torch::nn::AdaptiveLogSoftmaxWithLoss asm_(6, 10, std::vector<int64_t>{3, 6});
  EXPECT_ERROR("Target values should be in [0, 9], but values in range [0, 10] were found.",
               asm_(S({2, 6}), L({0, 10})));
  EXPECT_ERROR("Input and target should have the same size in the batch dimension.",
               asm_(S({2, 6}), L({0, 1, 2})));
}

}  // namespace

namespace {

using namespace brasa;
namespace F = torch::nn::functional;

TEST(MultiHeadAttentionForward, MoreBadInputGetsClearErrors) {
  auto options = [] {
    return F::MultiheadAttentionForwardFuncOptions(4, 2, golden::S({12, 4}), {}, {}, {}, false, 0.0,
                                                   golden::S({4, 4}), {});
  };
  Tensor q = golden::S({2, 1, 4}), kv = golden::S({3, 1, 4});
  EXPECT_ERROR("embed_dim 4 not divisible by num_heads 3",
               F::multi_head_attention_forward(q, kv, kv, options().num_heads(3)));
  EXPECT_ERROR("bias_k and bias_v go together",
               F::multi_head_attention_forward(q, kv, kv, options().bias_k(golden::S({1, 1, 4}))));
  EXPECT_ERROR("bias cannot be added to static key and value",
               F::multi_head_attention_forward(q, kv, kv,
                                               options()
                                                   .bias_k(golden::S({1, 1, 4}))
                                                   .bias_v(golden::S({1, 1, 4}))
                                                   .static_k(golden::S({2, 3, 2}))));
  EXPECT_ERROR("key_padding_mask must be [1, 3]",
               F::multi_head_attention_forward(
                   q, kv, kv, options().key_padding_mask(torch::zeros({1, 2}, kBool))));
  EXPECT_ERROR("expected query, key and value all 3-D [len, N, E] or all 2-D [len, E]",
               F::multi_head_attention_forward(q, golden::S({3, 4}), kv, options()));
  EXPECT_ERROR("do not match query",
               F::multi_head_attention_forward(q, kv, golden::S({2, 1, 4}), options()));
  EXPECT_ERROR("use_separate_proj_weight is false but in_proj_weight is undefined",
               F::multi_head_attention_forward(q, kv, kv, options().in_proj_weight(Tensor())));
}

TEST(AdaptiveLogSoftmaxWithLoss, MoreBadInputGetsClearErrors) {
  torch::nn::AdaptiveLogSoftmaxWithLoss asm_(6, 10, std::vector<int64_t>{3, 6});
  EXPECT_ERROR("0D or 1D target tensor expected, multi-target not supported",
               asm_(golden::S({2, 6}).to(kFloat), golden::L({0, 1}).view({1, 2})));
  EXPECT_ERROR("0D target tensor expects 1D input tensors",
               asm_(golden::S({2, 6}).to(kFloat), golden::L({1}).reshape({})));
  EXPECT_ERROR("AdaptiveLogSoftmaxWithLoss: expected input with 6 features",
               asm_(golden::S({2, 5}).to(kFloat), golden::L({0, 1})));
}

}  // namespace
