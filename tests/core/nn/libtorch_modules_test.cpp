// The F:: option structs (nn/functional_options.h), the alpha dropouts and
// Dropout3d (nn/dropout_modules.h), RNN and the cells (nn/recurrent_cells.h),
// InstanceNorm and BatchNorm3d (nn/norm_modules.h), spelled as libtorch code
// spells them, against PyTorch's outputs; their error paths. Gradients are in
// the gradcheck table.
#include <brasa/torch.h>

#include <sstream>

#include "../ops/golden_util.h"
#include "../test_util.h"

namespace {

using namespace brasa;
namespace F = torch::nn::functional;
using brasa::testing::printed;
using golden::expect_golden;
using golden::S;
using golden::set_sequential_weights;

TEST(FunctionalOptions, CallTheFunctionsTheyConfigure) {
  Tensor x = S({2, 5}) * 3;
  EXPECT_TRUE(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2))
                  .allclose(F::leaky_relu(x, 0.2)));
  EXPECT_TRUE(F::elu(x, F::ELUFuncOptions().alpha(0.5)).allclose(F::elu(x, 0.5)));
  EXPECT_TRUE(F::gelu(x, F::GELUFuncOptions().approximate("tanh")).allclose(F::gelu(x, "tanh")));
  EXPECT_TRUE(
      F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(5)).allclose(F::softplus(x, 2, 5)));
  EXPECT_TRUE(F::hardtanh(x, F::HardtanhFuncOptions().min_val(-0.5).max_val(0.5))
                  .allclose(x.clamp(-0.5, 0.5)));
  EXPECT_TRUE(F::relu6(x * 3, F::ReLU6FuncOptions()).allclose((x * 3).clamp(0, 6)));
  EXPECT_TRUE(F::selu(x, F::SELUFuncOptions()).allclose(F::selu(x)));
  EXPECT_TRUE(F::relu(x, F::ReLUFuncOptions()).allclose(x.clamp_min(0)));
  Tensor s = F::softmax(x.to(kFloat), F::SoftmaxFuncOptions(1).dtype(kDouble));
  EXPECT_EQ(s.scalar_type(), kDouble);
  EXPECT_TRUE(s.allclose(F::softmax(x, 1), 1e-6));
  EXPECT_TRUE(F::log_softmax(x, F::LogSoftmaxFuncOptions(0)).allclose(F::log_softmax(x, 0)));
  // inplace writes into the input and returns it.
  Tensor y = x.clone();
  Tensor r = F::leaky_relu(y, F::LeakyReLUFuncOptions().negative_slope(0.1).inplace(true));
  EXPECT_TRUE(r.is_same(y));
  EXPECT_TRUE(y.allclose(F::leaky_relu(x, 0.1)));
  // Dropout as a function trains by default; training(false) is the identity.
  EXPECT_TRUE(F::dropout(x, F::DropoutFuncOptions().p(0.4).training(false)).equal(x));
  Tensor d = F::dropout(torch::ones({1000}), F::DropoutFuncOptions().p(0.5));
  EXPECT_GT((d == 0).sum().item<int64_t>(), 350);
  Tensor w = S({5}, 0.6, 0.4), b = S({5}, 0.5, 0.3);
  EXPECT_TRUE(F::layer_norm(x, F::LayerNormFuncOptions({5}).weight(w).bias(b).eps(1e-3))
                  .allclose(F::layer_norm(x, {5}, w, b, 1e-3)));
  Tensor img = S({2, 4, 3});
  EXPECT_TRUE(F::group_norm(img, F::GroupNormFuncOptions(2).eps(1e-4))
                  .allclose(F::group_norm(img, 2, {}, {}, 1e-4)));
  EXPECT_TRUE(
      F::normalize(x, F::NormalizeFuncOptions().p(1).dim(0)).allclose(F::normalize(x, 1.0, 0)));
  Tensor mean = torch::zeros({4}, kDouble), var = torch::ones({4}, kDouble);
  Tensor bn = F::batch_norm(img, mean, var, F::BatchNormFuncOptions().training(true).momentum(0.5));
  EXPECT_NEAR(bn.mean().item<double>(), 0.0, 1e-12);
  EXPECT_GT(mean.abs().sum().item<double>(), 0.0);  // running stats updated
  Tensor table = S({6, 3});
  Tensor idx = torch::tensor(std::vector<int64_t>{0, 2, 5, 2});
  EXPECT_TRUE(F::embedding(idx, table, F::EmbeddingFuncOptions().padding_idx(2))
                  .allclose(F::embedding(idx, table, 2)));
  Tensor bags = F::embedding_bag(idx, table,
                                 F::EmbeddingBagFuncOptions()
                                     .mode(torch::kSum)
                                     .offsets(torch::tensor(std::vector<int64_t>{0, 2})));
  EXPECT_TRUE(bags[0].allclose(table[0] + table[2]));
  EXPECT_ERROR("a momentum of None",
               F::batch_norm(img, mean, var, F::BatchNormFuncOptions().momentum(std::nullopt)));
  EXPECT_ERROR("sparse gradients are not supported",
               F::embedding_bag(idx, table, F::EmbeddingBagFuncOptions().sparse(true)));
}

TEST(ModuleOptions, BuildTheModules) {
  torch::nn::PReLU prelu(torch::nn::PReLUOptions().num_parameters(3).init(0.1));
  EXPECT_EQ(prelu->weight.numel(), 3);
  EXPECT_NEAR(prelu->weight[1].item<float>(), 0.1, 1e-7);
  torch::nn::Bilinear bil(torch::nn::BilinearOptions(2, 3, 4).bias(false));
  EXPECT_SHAPE(bil->weight, {4, 2, 3});
  EXPECT_FALSE(bil->bias.defined());
  torch::nn::Unflatten unflat(torch::nn::UnflattenOptions(1, {2, 3}));
  EXPECT_SHAPE(unflat(torch::ones({4, 6})), {4, 2, 3});
  torch::nn::UnflattenOptions named("features", {{"C", 2}, {"W", 3}});
  EXPECT_EQ(named.dimname(), "features");
  EXPECT_EQ(named.namedshape().size(), 2u);
  EXPECT_ERROR("are for named tensors, which Brasa does not have", torch::nn::Unflatten(named));
  torch::nn::MultiheadAttention mha(torch::nn::MultiheadAttentionOptions(8, 2).bias(false));
  EXPECT_FALSE(mha->in_proj_bias.defined());
  torch::nn::SELU selu(torch::nn::SELUOptions().inplace(true));
  Tensor x = S({4});
  Tensor out = selu(x);
  EXPECT_TRUE(out.is_same(x));
  EXPECT_EQ(printed(*selu), "torch::nn::SELU(inplace=true)");
  EXPECT_EQ(printed(*torch::nn::ReLU6()), "torch::nn::ReLU6()");
}

TEST(AlphaDropout, KeepsMeanAndVarianceAndIsOffInEval) {
  torch::manual_seed(3);
  Tensor x = torch::randn({200000}, kDouble);
  Tensor y = torch::alpha_dropout(x, 0.3, true);
  EXPECT_NEAR(y.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(y.std().item<double>(), 1.0, 0.01);
  // Dropped elements all take one value: a * alpha' + b.
  const double a = 1 / std::sqrt((1.7580993408473766 * 1.7580993408473766 * 0.3 + 1) * 0.7);
  const double dropped = a * -1.7580993408473766 + a * 1.7580993408473766 * 0.3;
  const int64_t n_dropped = (y - dropped).abs().lt(1e-12).sum().item<int64_t>();
  EXPECT_NEAR(n_dropped / 200000.0, 0.3, 0.01);
  EXPECT_TRUE(torch::alpha_dropout(x, 0.3, false).equal(x));
  EXPECT_TRUE(F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(0.3)).equal(x));  // off by default
  // feature_alpha_dropout drops whole channels.
  Tensor f = torch::feature_alpha_dropout(torch::randn({8, 16, 5}, kDouble), 0.5, true);
  Tensor is_dropped = (f - dropped).abs().lt(1e-12).to(kLong).sum({2});
  EXPECT_TRUE(((is_dropped == 0) | (is_dropped == 5)).all().item<bool>());
  torch::nn::AlphaDropout m(torch::nn::AlphaDropoutOptions(0.2));
  m->eval();
  EXPECT_TRUE(m(x).equal(x));
  m->train();
  EXPECT_FALSE(m(x).equal(x));
  EXPECT_EQ(printed(*m), "torch::nn::AlphaDropout(p=0.2, inplace=false)");
  EXPECT_EQ(printed(*torch::nn::FeatureAlphaDropout()),
            "torch::nn::FeatureAlphaDropout(p=0.5, inplace=false)");
  EXPECT_ERROR("dropout probability has to be between 0 and 1", torch::alpha_dropout(x, 1.5, true));
  EXPECT_ERROR("expected at least a 2-D input",
               torch::feature_alpha_dropout(torch::ones({3}), 0.5, true));
}

TEST(Dropout3d, ZeroesWholeChannels) {
  torch::manual_seed(5);
  Tensor y = F::dropout3d(torch::ones({4, 8, 2, 3, 3}), 0.5, true);
  Tensor per_channel = y.flatten(2);
  Tensor mins = std::get<0>(per_channel.min(2)), maxs = std::get<0>(per_channel.max(2));
  EXPECT_TRUE(mins.equal(maxs));  // one value per channel
  EXPECT_TRUE(((maxs == 0) | (maxs == 2)).all().item<bool>());
  torch::nn::Dropout3d m(0.5);
  m->eval();
  Tensor x = torch::ones({8, 2, 3, 3});
  EXPECT_TRUE(m(x).equal(x));
  EXPECT_EQ(printed(*m), "torch::nn::Dropout3d(p=0.5, inplace=false)");
  EXPECT_ERROR("expected a 4-D (unbatched) or 5-D (batched) input",
               F::dropout3d(torch::ones({2, 3, 4}), 0.5, true));
}

TEST(RecurrentCells, MatchPyTorch) {
  expect_golden("rnn_tanh_cell",
                torch::rnn_tanh_cell(S({2, 3}), S({2, 4}, 0.5, 0.3), S({4, 3}, 0.7, 0.1),
                                     S({4, 4}, 0.9, 0.2), S({4}, 0.3, 0.4), S({4}, 0.2, 0.5)));
  expect_golden("rnn_relu_cell", torch::rnn_relu_cell(S({2, 3}), S({2, 4}, 0.5, 0.3),
                                                      S({4, 3}, 0.7, 0.1), S({4, 4}, 0.9, 0.2)));
  auto [h, c] =
      torch::lstm_cell(S({2, 3}), {S({2, 2}, 0.5, 0.3), S({2, 2}, 0.8, 0.6)}, S({8, 3}, 0.7, 0.1),
                       S({8, 2}, 0.9, 0.2), S({8}, 0.3, 0.4), S({8}, 0.2, 0.5));
  expect_golden("lstm_cell_h", h);
  expect_golden("lstm_cell_c", c);
  expect_golden("gru_cell",
                torch::gru_cell(S({2, 3}), S({2, 2}, 0.5, 0.3), S({6, 3}, 0.7, 0.1),
                                S({6, 2}, 0.9, 0.2), S({6}, 0.3, 0.4), S({6}, 0.2, 0.5)));
  torch::nn::RNN rnn(
      torch::nn::RNNOptions(3, 2).num_layers(2).nonlinearity(torch::kReLU).bidirectional(true));
  rnn->to(kDouble);
  set_sequential_weights(*rnn);
  auto [out, hn] = rnn(S({4, 2, 3}), S({4, 2, 2}, 0.5, 0.3));
  expect_golden("rnn_relu_2layer_bidir_out", out);
  expect_golden("rnn_relu_2layer_bidir_h", hn);
}

// LSTM's proj_size: weight_hr_l{k} projects h to proj_size, and h0/h_n are
// that wide while c stays hidden_size wide.
TEST(RecurrentCells, LstmWithProjectionsMatchesPyTorch) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  lstm->to(kDouble);
  set_sequential_weights(*lstm);
  EXPECT_EQ(lstm->named_parameters()["weight_hr_l1_reverse"].sizes(), IntArrayRef({2, 4}));
  EXPECT_EQ(lstm->named_parameters()["weight_hh_l0"].sizes(), IntArrayRef({16, 2}));
  EXPECT_EQ(lstm->named_parameters()["weight_ih_l1"].sizes(), IntArrayRef({16, 4}));
  auto [out, state] =
      lstm(S({5, 2, 3}), std::make_tuple(S({4, 2, 2}, 0.5, 0.3), S({4, 2, 4}, 0.8, 0.6)));
  expect_golden("lstm_proj_out", out);
  expect_golden("lstm_proj_h", std::get<0>(state));
  expect_golden("lstm_proj_c", std::get<1>(state));
  // Without given states, h0 is [layers * dirs, N, proj_size] of zeros.
  auto [out0, state0] = lstm(S({5, 2, 3}));
  EXPECT_EQ(std::get<0>(state0).sizes(), IntArrayRef({4, 2, 2}));
  EXPECT_EQ(std::get<1>(state0).sizes(), IntArrayRef({4, 2, 4}));
  EXPECT_NE(printed(*lstm).find("proj_size=2"), std::string::npos) << printed(*lstm);
  EXPECT_ERROR("LSTM: expected hidden state of shape [4, 2, 2], got [4, 2, 4]",
               lstm(S({5, 2, 3}), std::make_tuple(S({4, 2, 4}), S({4, 2, 4}))));
  EXPECT_ERROR("LSTM: proj_size (4) has to be smaller than hidden_size (4)",
               torch::nn::LSTM(torch::nn::LSTMOptions(3, 4).proj_size(4)));
  EXPECT_ERROR("LSTM: proj_size should be a positive integer or zero to disable projections",
               torch::nn::LSTM(torch::nn::LSTMOptions(3, 4).proj_size(-1)));
  EXPECT_ERROR("GRU: proj_size argument is only supported for LSTM, not RNN or GRU",
               torch::nn::GRU(torch::nn::GRUOptions(3, 4).proj_size(2)));
}

// MultiheadAttention's kdim/vdim (separate q/k/v projections), add_bias_kv and
// add_zero_attn, with per-head weights.
TEST(ModuleOptions, MultiheadAttentionOptionsMatchPyTorch) {
  torch::nn::MultiheadAttention mha(
      torch::nn::MultiheadAttentionOptions(4, 2).add_bias_kv(true).add_zero_attn(true).kdim(3).vdim(
          5));
  mha->to(kDouble);
  std::vector<std::string> names;
  for (auto& p : mha->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                             "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
                                             "out_proj.bias"}));
  EXPECT_FALSE(mha->in_proj_weight.defined());
  set_sequential_weights(*mha);
  auto [out, weights] = mha(S({2, 3, 4}), S({3, 3, 3}, 0.5, 0.3), S({3, 3, 5}, 0.7, 0.4), Tensor(),
                            true, Tensor(), /*average_attn_weights=*/false);
  expect_golden("mha_kdim_vdim_bias_kv_out", out);
  expect_golden("mha_kdim_vdim_bias_kv_weights", weights);
  // A copy has the same layout.
  auto copy = std::dynamic_pointer_cast<torch::nn::MultiheadAttentionImpl>(mha->clone());
  EXPECT_EQ(copy->named_parameters().size(), 8u);
  EXPECT_ERROR(
      "MultiheadAttention: expected query [L, N, 4], key [S, N, 3] and value [S, N, 5], "
      "got [2, 3, 4], [3, 3, 4], [3, 3, 5]",
      mha(S({2, 3, 4}), S({3, 3, 4}), S({3, 3, 5})));
  EXPECT_ERROR("MultiheadAttention: kdim and vdim must be positive, got 0 and 4",
               torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(4, 2).kdim(0)));
}

// Options that are set after construction, as libtorch's setters allow.
TEST(ModuleOptions, ConstructorFieldsHaveSetters) {
  auto conv = torch::nn::Conv2dOptions(1, 2, 3).in_channels(3).out_channels(4).kernel_size(
      std::vector<int64_t>{5});
  EXPECT_EQ(torch::nn::Conv2d(conv)->weight.sizes(), IntArrayRef({4, 3, 5, 5}));
  EXPECT_EQ(torch::nn::Linear(torch::nn::LinearOptions(1, 1).in_features(3).out_features(2))
                ->weight.sizes(),
            IntArrayRef({2, 3}));
  EXPECT_EQ(
      torch::nn::Embedding(torch::nn::EmbeddingOptions(1, 1).num_embeddings(5).embedding_dim(2))
          ->weight.sizes(),
      IntArrayRef({5, 2}));
  auto pool = torch::nn::MaxPool2dOptions(2).kernel_size({3, 1});
  EXPECT_EQ(pool.kernel_size(), (std::vector<int64_t>{3, 1}));
  // The stride stays the constructor's 2.
  EXPECT_EQ(F::max_pool2d(S({1, 1, 3, 2}), pool).sizes(), IntArrayRef({1, 1, 1, 1}));
  auto t = torch::nn::ConvTranspose2dOptions(1, 1, 3)
               .stride(std::vector<int64_t>{2, 1})
               .padding(std::vector<int64_t>{1, 0});
  EXPECT_EQ(t.stride(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(torch::nn::ConvTranspose2d(t)(torch::ones({1, 1, 4, 4})).sizes(),
            IntArrayRef({1, 1, 7, 6}));
  EXPECT_EQ(torch::nn::GroupNormOptions(1, 2).num_groups(2).num_groups(), 2);
  // F::normalize writes into out; F::softmin casts first.
  Tensor out = torch::empty({2, 3}, torch::kDouble);
  Tensor r = F::normalize(S({2, 3}), F::NormalizeFuncOptions().dim(1).out(out));
  EXPECT_TRUE(r.is_same(out));
  EXPECT_TRUE(out.allclose(F::normalize(S({2, 3}), F::NormalizeFuncOptions().dim(1))));
  EXPECT_EQ(F::softmin(S({2, 3}), F::SoftminFuncOptions(1).dtype(torch::kFloat)).dtype(),
            torch::kFloat);
  EXPECT_TRUE(F::pad(S({2}), F::PadFuncOptions({1}).pad({1, 2})).equal(F::pad(S({2}), {1, 2})));
}

TEST(RecurrentCells, ModulesStepLikeTheFunctions) {
  torch::nn::LSTMCell lstm(3, 2);
  Tensor x = torch::randn({5, 3});
  auto [h, c] = lstm(x);
  auto [h2, c2] = torch::lstm_cell(x, {torch::zeros({5, 2}), torch::zeros({5, 2})}, lstm->weight_ih,
                                   lstm->weight_hh, lstm->bias_ih, lstm->bias_hh);
  EXPECT_TRUE(h.allclose(h2) && c.allclose(c2));
  auto [hu, cu] = lstm(x[0], std::make_tuple(h[0], c[0]));  // unbatched
  EXPECT_SHAPE(hu, {2});
  torch::nn::GRUCell gru(torch::nn::GRUCellOptions(3, 4).bias(false));
  EXPECT_FALSE(gru->bias_ih.defined());
  EXPECT_EQ(gru->named_parameters().size(), 2u);
  EXPECT_SHAPE(gru(x), {5, 4});
  torch::nn::RNNCell cell(torch::nn::RNNCellOptions(3, 4).nonlinearity(torch::kReLU));
  EXPECT_GE(cell(x).min().item<float>(), 0.0f);
  EXPECT_EQ(printed(*cell), "torch::nn::RNNCell(3, 4, nonlinearity=kReLU)");
  EXPECT_EQ(printed(*gru), "torch::nn::GRUCell(3, 4, bias=false)");
  EXPECT_EQ(printed(*lstm), "torch::nn::LSTMCell(3, 2)");
  // Clones are independent copies.
  auto copy = std::dynamic_pointer_cast<nn::LSTMCellImpl>(lstm->clone());
  EXPECT_TRUE(copy->weight_ih.equal(lstm->weight_ih));
  EXPECT_FALSE(copy->weight_ih.is_alias_of(lstm->weight_ih));
  EXPECT_ERROR("input has inconsistent input_size: got 4 expected 3", lstm(torch::ones({2, 4})));
  EXPECT_ERROR("Expected input to be 1D or 2D", gru(torch::ones({1, 2, 3})));
  EXPECT_ERROR("expected hidden state [5, 4]", gru(x, torch::zeros({5, 3})));
  EXPECT_ERROR("lstm_cell: expected hx to hold h and c",
               torch::lstm_cell(x, {torch::zeros({5, 2})}, lstm->weight_ih, lstm->weight_hh));
  EXPECT_ERROR("gru_cell: expected w_ih [12, 3]",
               torch::gru_cell(x, torch::zeros({5, 4}), lstm->weight_ih, gru->weight_hh));
}

TEST(RecurrentCells, SequenceFunctionsRunTheModulesMath) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  Tensor x = torch::randn({5, 2, 3}), h0 = torch::randn({4, 2, 4}), c0 = torch::randn({4, 2, 4});
  auto [out, states] = lstm(x, std::make_tuple(h0, c0));
  auto [out2, h, c] =
      torch::lstm(x, {h0, c0}, lstm->parameters(), true, 2, 0.0, false, true, false);
  EXPECT_TRUE(out.allclose(out2) && std::get<0>(states).allclose(h) &&
              std::get<1>(states).allclose(c));
  torch::nn::GRU gru(torch::nn::GRUOptions(3, 4).bias(false).batch_first(true));
  Tensor xb = torch::randn({2, 5, 3});
  auto [gout, gh] = gru(xb);
  auto [gout2, gh2] =
      torch::gru(xb, torch::zeros({1, 2, 4}), gru->parameters(), false, 1, 0.0, false, false, true);
  EXPECT_TRUE(gout.allclose(gout2) && gh.allclose(gh2));
  torch::nn::RNN rnn(torch::nn::RNNOptions(3, 4).nonlinearity(torch::kReLU));
  auto [rout, rh] = rnn(x);
  auto [rout2, rh2] = torch::rnn_relu(x, torch::zeros({1, 2, 4}), rnn->parameters(), true, 1, 0.0,
                                      false, false, false);
  EXPECT_TRUE(rout.allclose(rout2) && rh.allclose(rh2));
  auto [tout, th] = torch::rnn_tanh(x, torch::zeros({1, 2, 4}), rnn->parameters(), true, 1, 0.0,
                                    false, false, false);
  EXPECT_TRUE(th.abs().max().item<float>() <= 1.0f);
  std::vector<Tensor> params = lstm->parameters();
  std::vector<Tensor> half(params.begin(), params.begin() + 8);
  EXPECT_ERROR("expected 16 parameter tensors (2 layers, 2 directions, 4 each), got 8",
               torch::lstm(x, {h0, c0}, half, true, 2, 0.0, false, true, false));
  EXPECT_ERROR("lstm: expected hx to hold h0 and c0",
               torch::lstm(x, {h0}, lstm->parameters(), true, 2, 0.0, false, true, false));
  EXPECT_ERROR(
      "expected hidden states [4, 2, hidden_size]",
      torch::gru(x, torch::zeros({1, 2, 4}), lstm->parameters(), true, 2, 0.0, false, true, false));
  EXPECT_ERROR("LSTM: input size 2 != input_size 3", lstm(torch::randn({5, 2, 2})));
}

TEST(InstanceNorm, MatchesPyTorch) {
  expect_golden("instance_norm_affine",
                F::instance_norm(
                    S({2, 3, 4}),
                    F::InstanceNormFuncOptions().weight(S({3}, 0.6, 0.4)).bias(S({3}, 0.5, 0.3))));
  expect_golden("instance_norm_running",
                F::instance_norm(S({2, 3, 4}), F::InstanceNormFuncOptions()
                                                   .running_mean(S({3}) * 0.1)
                                                   .running_var(S({3}).abs() + 0.5)
                                                   .use_input_stats(false)));
  Tensor mean = S({3}) * 0.1, var = S({3}).abs() + 0.5;
  torch::instance_norm(S({2, 3, 4}), {}, {}, mean, var, true, 0.3, 1e-5);
  expect_golden("instance_norm_updated_mean", mean);
  expect_golden("instance_norm_updated_var", var);
  torch::nn::InstanceNorm2d m(torch::nn::InstanceNorm2dOptions(2).affine(true));
  m->to(kDouble);
  expect_golden("instance_norm2d_module", m(S({2, 2, 3, 3})));
  EXPECT_EQ(printed(*m),
            "torch::nn::InstanceNorm2d(2, eps=1e-05, momentum=0.1, affine=true, "
            "track_running_stats=false)");
  EXPECT_EQ(m->named_buffers().size(), 0u);
  torch::nn::InstanceNorm1d tracked(torch::nn::InstanceNorm1dOptions(3).track_running_stats(true));
  tracked(torch::randn({3, 7}));  // unbatched
  EXPECT_GT(tracked->running_mean.abs().sum().item<float>(), 0.0f);
  tracked->eval();
  EXPECT_SHAPE(tracked(torch::randn({2, 3, 7})), {2, 3, 7});
  EXPECT_ERROR("InstanceNorm3d: expected 4D (unbatched) or 5D (batched) input",
               torch::nn::InstanceNorm3d(2)(torch::ones({2, 2, 3})));
  EXPECT_ERROR("Expected running_mean and running_var to be defined",
               F::instance_norm(S({2, 3, 4}), F::InstanceNormFuncOptions().use_input_stats(false)));
  EXPECT_ERROR("expected running stats, weight and bias of shape [3]",
               F::instance_norm(S({2, 3, 4}), F::InstanceNormFuncOptions().weight(S({4}))));
  // One value per instance: the error names the caller's shape, not the
  // reshaped batch norm's; with running stats a single value normalizes.
  EXPECT_ERROR(
      "instance_norm: Expected more than 1 spatial element when training, got input "
      "size [2, 8, 1, 1]",
      F::instance_norm(torch::ones({2, 8, 1, 1})));
  Tensor single_mean = torch::zeros({3}, kDouble), single_var = torch::ones({3}, kDouble);
  EXPECT_NEAR(F::instance_norm(S({2, 3, 1}), F::InstanceNormFuncOptions()
                                                 .running_mean(single_mean)
                                                 .running_var(single_var)
                                                 .use_input_stats(false))
                  .sub(S({2, 3, 1}))
                  .abs()
                  .max()
                  .item<double>(),
              0.0, 1e-4);
}

TEST(BatchNorm3d, NormalizesFiveDimInputs) {
  expect_golden("batch_norm_5d",
                torch::batch_norm(S({2, 3, 2, 2, 2}), S({3}, 0.6, 0.4), std::nullopt,
                                  torch::zeros({3}, kDouble), torch::ones({3}, kDouble), true, 0.1,
                                  1e-5, false));
  torch::nn::BatchNorm3d bn(torch::nn::BatchNorm3dOptions(3).momentum(0.2));
  Tensor y = bn(torch::randn({4, 3, 2, 3, 3}));
  EXPECT_NEAR(y.mean().item<float>(), 0.0, 1e-5);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  EXPECT_EQ(printed(*bn),
            "torch::nn::BatchNorm3d(3, eps=1e-05, momentum=0.2, affine=true, "
            "track_running_stats=true)");
  EXPECT_ERROR("BatchNorm3d: expected 5-D input", bn(torch::ones({4, 3, 2, 2})));
}

}  // namespace
