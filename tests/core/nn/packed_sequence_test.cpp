// Packed sequences (nn/packed_sequence.h) and the recurrent modules' packed
// forward: packing, padding and their round trip, the errors, and LSTM, GRU
// and RNN on a packed batch against each sequence run alone. Gradients of
// pack/pad and of the packed LSTM are in the gradcheck table.
#include <brasa/torch.h>

#include "../test_util.h"

namespace {

using namespace brasa;
namespace rnn = torch::nn::utils::rnn;

// A padded batch [T, B, F] whose step t of sequence b holds 100 b + 10 t + f
// (and -1 past its length).
Tensor numbered_batch(int64_t T, const std::vector<int64_t>& lengths, int64_t F) {
  const int64_t B = static_cast<int64_t>(lengths.size());
  Tensor x = full({T, B, F}, -1.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < lengths[b]; ++t)
      for (int64_t f = 0; f < F; ++f) x[t][b][f] = double(100 * b + 10 * t + f);
  return x;
}

TEST(PackedSequence, PacksStepByStepLongestFirstAndPadsBack) {
  Tensor x = numbered_batch(4, {2, 4, 3}, 1);
  auto packed = rnn::pack_padded_sequence(x, tensor({2, 4, 3}), false, /*enforce_sorted=*/false);
  EXPECT_VALUES(packed.batch_sizes(), {3, 3, 2, 1});
  EXPECT_VALUES(packed.sorted_indices(), {1, 2, 0});
  EXPECT_VALUES(packed.unsorted_indices(), {2, 0, 1});
  // Step 0 of sequences 1, 2, 0; step 1 of the same; step 2 of 1 and 2; step 3 of 1.
  EXPECT_VALUES(packed.data().flatten(), {100, 200, 0, 110, 210, 10, 120, 220, 130});
  EXPECT_EQ(packed.batch_sizes().dtype(), kLong);
  EXPECT_TRUE(packed.batch_sizes().is_cpu());

  auto [padded, lengths] = rnn::pad_packed_sequence(packed, false, -1.0);
  EXPECT_TRUE(padded.equal(x));
  EXPECT_VALUES(lengths, {2, 4, 3});
  auto [longer, same_lengths] = rnn::pad_packed_sequence(packed, false, -1.0, 6);
  EXPECT_EQ(longer.sizes(), IntArrayRef({6, 3, 1}));
  EXPECT_TRUE(longer.slice(0, 0, 4).equal(x));
  EXPECT_EQ(longer.slice(0, 4).eq(-1).all().item<bool>(), true);
  EXPECT_VALUES(same_lengths, {2, 4, 3});

  // batch_first, sorted already: no indices kept.
  Tensor xb = numbered_batch(3, {3, 3, 1}, 2).transpose(0, 1).contiguous();  // [B, T, F]
  auto sorted = rnn::pack_padded_sequence(xb, tensor({3, 3, 1}), /*batch_first=*/true);
  EXPECT_FALSE(sorted.sorted_indices().defined());
  EXPECT_FALSE(sorted.unsorted_indices().defined());
  EXPECT_VALUES(sorted.batch_sizes(), {3, 2, 2});
  auto [back, back_lengths] = rnn::pad_packed_sequence(sorted, /*batch_first=*/true, -1.0);
  EXPECT_TRUE(back.equal(xb));
  EXPECT_VALUES(back_lengths, {3, 3, 1});
}

TEST(PackedSequence, PadSequenceAndPackSequence) {
  std::vector<Tensor> seqs{arange(4.0).view({2, 2}), arange(6.0).view({3, 2}) + 10,
                           arange(2.0).view({1, 2}) + 20};
  Tensor padded = rnn::pad_sequence(seqs, /*batch_first=*/true, -5);
  EXPECT_EQ(padded.sizes(), IntArrayRef({3, 3, 2}));
  EXPECT_VALUES(padded.flatten(),
                {0, 1, 2, 3, -5, -5, 10, 11, 12, 13, 14, 15, 20, 21, -5, -5, -5, -5});
  EXPECT_EQ(rnn::pad_sequence(seqs).sizes(), IntArrayRef({3, 3, 2}));
  EXPECT_TRUE(rnn::pad_sequence(seqs).transpose(0, 1).equal(rnn::pad_sequence(seqs, true, 0)));

  auto packed = rnn::pack_sequence(seqs, /*enforce_sorted=*/false);
  EXPECT_VALUES(packed.batch_sizes(), {3, 2, 1});
  EXPECT_VALUES(packed.data().select(1, 0), {10, 0, 20, 12, 2, 14});
  auto [back, lengths] = rnn::pad_packed_sequence(packed, true);
  EXPECT_VALUES(lengths, {2, 3, 1});
  EXPECT_TRUE(back[1].equal(seqs[1]));
  EXPECT_TRUE(back[0].slice(0, 0, 2).equal(seqs[0]));
}

TEST(PackedSequence, BadInputIsAClearError) {
  Tensor x = randn({4, 3, 2});
  EXPECT_ERROR("must be sorted in decreasing order",
               rnn::pack_padded_sequence(x, tensor({2, 4, 3})));
  EXPECT_ERROR("has to be greater than 0",
               rnn::pack_padded_sequence(x, tensor({4, 0, 1}), false, false));
  EXPECT_ERROR("to be equal to batch_size", rnn::pack_padded_sequence(x, tensor({4, 2})));
  EXPECT_ERROR("exceeds the input's 4 steps", rnn::pack_padded_sequence(x, tensor({5, 2, 1})));
  EXPECT_ERROR("expected input [T, B, *]", rnn::pack_padded_sequence(randn({4}), tensor({4})));
  auto packed = rnn::pack_padded_sequence(x, tensor({4, 2, 1}));
  EXPECT_ERROR("Expected total_length to be at least",
               rnn::pad_packed_sequence(packed, false, 0, 3));
  EXPECT_ERROR("received an empty list", rnn::pad_sequence(std::vector<Tensor>{}));
  EXPECT_ERROR("same trailing sizes", rnn::pad_sequence({randn({2, 3}), randn({2, 4})}));
  EXPECT_ERROR("batch_sizes should always be a 1-D int64 tensor on the CPU",
               rnn::PackedSequence(randn({3, 2}), tensor({2.0, 1.0})));
  EXPECT_ERROR("the batch sizes add up to 3 steps but data has 4",
               rnn::pad_packed_sequence(rnn::PackedSequence(randn({4, 2}), tensor({2, 1}))));
  EXPECT_ERROR("expected a non-empty PackedSequence",
               rnn::pad_packed_sequence(
                   rnn::PackedSequence(randn({0, 2}), empty({0}, TensorOptions().dtype(kLong)))));
  EXPECT_ERROR("expected a 1-D permutation", rnn::invert_permutation(zeros({2, 2}, kLong)));
  // The packed torch::lstm / torch::gru check their batch sizes.
  const Tensor w8 = randn({8, 2}), h = zeros({1, 2, 2});
  EXPECT_ERROR("lstm: expected positive, non-increasing batch_sizes",
               torch::lstm(randn({3, 2}), tensor({1, 2}, TensorOptions().dtype(kLong)), {h, h},
                           {w8, w8}, false, 1, 0.0, false, false));
  EXPECT_ERROR("gru: the batch sizes add up to 3 steps but the data has 4",
               torch::gru(randn({4, 2}), tensor({2, 1}, TensorOptions().dtype(kLong)), h,
                          {randn({6, 2}), randn({6, 2})}, false, 1, 0.0, false, false));
  EXPECT_ERROR("rnn_tanh: expected packed data [sum of lengths, input_size]",
               torch::rnn_tanh(randn({3}), tensor({2, 1}, TensorOptions().dtype(kLong)), h,
                               {randn({2, 2}), randn({2, 2})}, false, 1, 0.0, false, false));
  torch::nn::LSTM lstm(2, 3);
  EXPECT_ERROR("LSTM: expected packed data [sum of lengths, input_size]",
               lstm->forward_with_packed_input(
                   rnn::PackedSequence(randn({3}), tensor({2, 1}, TensorOptions().dtype(kLong)))));
  EXPECT_ERROR("input size 5 != input_size 2",
               lstm->forward_with_packed_input(rnn::pack_sequence({randn({2, 5})})));
  EXPECT_ERROR("expected hidden state of shape [1, 3, 3]",
               lstm->forward_with_packed_input(
                   rnn::pack_padded_sequence(randn({4, 3, 2}), tensor({4, 2, 1})),
                   std::make_tuple(zeros({1, 2, 3}), zeros({1, 2, 3}))));
}

void expect_near(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_LT((a - b).abs().max().item<double>(), tol);
}

// A packed batch through `run_packed` equals each sequence run alone through
// `run_one` (output steps, final states in the original order, and the
// parameters' gradients).
template <class RunPacked, class RunOne>
void expect_packed_equals_one_by_one(torch::nn::Module& module, const RunPacked& run_packed,
                                     const RunOne& run_one, int64_t input_size) {
  manual_seed(4);
  const std::vector<int64_t> lengths{3, 5, 1, 4};
  std::vector<Tensor> seqs;
  for (int64_t len : lengths) seqs.push_back(randn({len, input_size}));
  auto [packed_out, packed_final] = run_packed(rnn::pack_sequence(seqs, false));
  auto [padded, out_lengths] = rnn::pad_packed_sequence(packed_out);
  (padded.sum() + packed_final.sum()).backward();
  std::vector<Tensor> packed_grads;
  for (const auto& p : module.parameters()) packed_grads.push_back(p.grad().clone());

  module.zero_grad();
  Tensor alone_total = zeros({});
  for (size_t b = 0; b < seqs.size(); ++b) {
    auto [out, final_state] = run_one(seqs[b].unsqueeze(1), static_cast<int64_t>(b));
    expect_near(padded.slice(0, 0, lengths[b]).select(1, static_cast<int64_t>(b)), out.squeeze(1),
                1e-5);
    expect_near(packed_final.select(1, static_cast<int64_t>(b)), final_state.squeeze(1), 1e-5);
    EXPECT_TRUE(padded.slice(0, lengths[b])
                    .select(1, static_cast<int64_t>(b))
                    .eq(0)
                    .all()
                    .template item<bool>());
    alone_total = alone_total + out.sum() + final_state.sum();
  }
  alone_total.backward();
  auto params = module.parameters();
  for (size_t i = 0; i < params.size(); ++i) expect_near(packed_grads[i], params[i].grad(), 1e-4);
  EXPECT_VALUES(out_lengths, {3, 5, 1, 4});
}

TEST(PackedSequence, LstmStepsEachSequenceAsFarAsItsLength) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  const Tensor h0 = randn({4, 4, 4}), c0 = randn({4, 4, 4});  // [layers * dirs, B, H]
  expect_packed_equals_one_by_one(
      *lstm,
      [&](const rnn::PackedSequence& p) {
        auto [out, state] = lstm->forward_with_packed_input(p, std::make_tuple(h0, c0));
        return std::make_pair(out, cat({std::get<0>(state), std::get<1>(state)}, 2));
      },
      [&](const Tensor& seq, int64_t b) {
        auto h = h0.slice(1, b, b + 1), c = c0.slice(1, b, b + 1);
        auto [out, state] = lstm->forward(seq, std::make_tuple(h, c));
        return std::make_pair(out, cat({std::get<0>(state), std::get<1>(state)}, 2));
      },
      3);
}

TEST(PackedSequence, GruAndRnnStepEachSequenceAsFarAsItsLength) {
  torch::nn::GRU gru(torch::nn::GRUOptions(2, 3).num_layers(2));
  expect_packed_equals_one_by_one(
      *gru,
      [&](const rnn::PackedSequence& p) {
        auto [out, h] = gru->forward_with_packed_input(p);
        return std::make_pair(out, h);
      },
      [&](const Tensor& seq, int64_t) { return gru->forward(seq); }, 2);
  torch::nn::RNN relu_rnn(
      torch::nn::RNNOptions(2, 3).nonlinearity(torch::kReLU).bidirectional(true));
  const Tensor h0 = randn({2, 4, 3});
  expect_packed_equals_one_by_one(
      *relu_rnn,
      [&](const rnn::PackedSequence& p) {
        auto [out, h] = relu_rnn->forward_with_packed_input(p, h0);
        return std::make_pair(out, h);
      },
      [&](const Tensor& seq, int64_t b) { return relu_rnn->forward(seq, h0.slice(1, b, b + 1)); },
      2);
}

}  // namespace
