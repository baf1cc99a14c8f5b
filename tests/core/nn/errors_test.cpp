// Messages of the nn / optim / data errors: each names the op, the shapes or
// values involved and what was expected.
#include <unistd.h>

#include <filesystem>

#include "../test_util.h"

namespace brasa {
namespace {

TEST(NnErrors, LayersNameShapesAndExpectations) {
  EXPECT_ERROR("conv2d: expected input [2, 3, 8, 8] to have 4 channels",
               conv2d(randn({2, 3, 8, 8}), randn({5, 4, 3, 3})));
  EXPECT_ERROR("conv2d: expected a 4-D input [N, C, H, W], got 3-D",
               conv2d(randn({3, 8, 8}), randn({5, 3, 3, 3})));
  EXPECT_ERROR("is larger than the padded input", conv2d(randn({1, 1, 2, 2}), randn({1, 1, 3, 3})));
  EXPECT_ERROR("linear: input of shape [2, 5] does not match the weight's in_features 4",
               F::linear(randn({2, 5}), randn({3, 4})));
  EXPECT_ERROR("batch_norm: expected weight of shape [3]",
               F::batch_norm(randn({4, 3}), Tensor(), Tensor(), ones({2}), Tensor(), true));
  EXPECT_ERROR("layer_norm: input shape [2, 3] does not end with normalized_shape [4]",
               F::layer_norm(randn({2, 3}), {4}));
  EXPECT_ERROR("group_norm: expected input [N, C, ...] with C (3) divisible by num_groups (2)",
               F::group_norm(randn({2, 3, 4}), 2));
  EXPECT_ERROR("max_pool2d: pad should be at most half of kernel size",
               max_pool2d(randn({1, 1, 4, 4}), {2}, {2}, {2}));
  EXPECT_ERROR("interpolate: mode must be 'nearest', 'nearest-exact', 'linear', 'bilinear'",
               F::interpolate(randn({1, 1, 2, 2}), {3, 3}, "lanczos"));
  EXPECT_ERROR("one_hot: class values must be in [0, 3)",
               F::one_hot(tensor(std::vector<int64_t>{0, 3}), 3));
  EXPECT_ERROR("dropout: probability has to be between 0 and 1, but got 1.5",
               F::dropout(randn({2}), 1.5));
  EXPECT_ERROR("nll_loss: target 7 is out of bounds for 3 classes",
               F::nll_loss(randn({2, 3}), tensor(std::vector<int64_t>{0, 7})));
  EXPECT_ERROR(
      "nll_loss: weight tensor should be defined either for all 3 classes or no classes but got "
      "weight tensor of shape: [2]",
      F::nll_loss(randn({2, 3}), tensor(std::vector<int64_t>{0, 1}),
                  F::NLLLossFuncOptions().weight(ones({2}))));
  EXPECT_ERROR("mse_loss: input [2] and target [3] must have the same shape",
               F::mse_loss(randn({2}), randn({3})));
  EXPECT_ERROR("MultiheadAttention: embed_dim (6) must be divisible by num_heads (4)",
               nn::MultiheadAttention(6, 4));
  EXPECT_ERROR(
      "TransformerEncoderLayer: activation must be relu or gelu",
      nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(4, 2).activation("tanh")));
  nn::GRU gru(3, 4);
  EXPECT_ERROR("GRU: expected hidden state of shape [1, 2, 4], got [1, 2, 5]",
               gru(randn({5, 2, 3}), randn({1, 2, 5})));
  EXPECT_ERROR("Conv2d: in_channels (3) and out_channels (4) must be divisible by groups (2)",
               nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)));
}

TEST(NnErrors, ModulesOptimizersSchedulersData) {
  nn::Linear fc(2, 2);
  EXPECT_ERROR("register_parameter: attribute 'weight' already exists in Linear",
               fc->register_parameter("weight", zeros({1})));
  EXPECT_ERROR("register_module: name must be non-empty and contain no dot, got 'a.b'",
               fc->register_module("a.b", nn::Linear(1, 1)));
  EXPECT_ERROR("Accessing an empty ModuleHolder", nn::Linear(nullptr)->forward(zeros({1})));
  EXPECT_ERROR("SGD: invalid learning rate: -1",
               optim::SGD(fc->parameters(), optim::SGDOptions(-1)));
  EXPECT_ERROR("SGD: nesterov momentum requires a momentum and zero dampening",
               optim::SGD(fc->parameters(), optim::SGDOptions(0.1).nesterov(true)));
  EXPECT_ERROR("Adam: invalid beta parameters: (1, 0.999)",
               optim::Adam(fc->parameters(), optim::AdamOptions(0.1).betas({1.0, 0.999})));
  optim::SGD opt(fc->parameters(), optim::SGDOptions(0.1));
  EXPECT_ERROR("StepLR: step_size must be positive, got 0", optim::StepLR(opt, 0));
  EXPECT_ERROR("OneCycleLR: need total_steps > 0 and 0 < pct_start < 1",
               optim::OneCycleLR(opt, 1.0, 10, 1.5));
  EXPECT_ERROR("ReduceLROnPlateau: factor should be < 1.0, got 2",
               optim::ReduceLROnPlateau(opt, optim::ReduceLROnPlateau::Mode::kMin, 2.0));
  EXPECT_ERROR("DataLoader: batch_size must be positive, got 0",
               data::make_data_loader(data::TensorDataset(zeros({4, 1}), zeros({4})),
                                      data::DataLoaderOptions(0)));
  EXPECT_ERROR("DistributedSampler: invalid rank 3 for 2 replicas",
               data::samplers::DistributedRandomSampler(10, 2, 3));
  EXPECT_ERROR("Normalize: 3 per-channel values for a batch of shape [1, 2, 1, 1]",
               data::transforms::Normalize<>({0.1, 0.2, 0.3},
                                             {1.0, 1.0, 1.0})({zeros({1, 2, 1, 1}), zeros({1})}));
  EXPECT_ERROR("vector_to_parameters: expected a vector of 6 elements, got shape [3]",
               nn::utils::vector_to_parameters(zeros({3}), fc->parameters()));
}

TEST(NnErrors, MoreOptionChecksAndFiles) {
  nn::Linear fc(2, 2);
  EXPECT_ERROR("RMSprop: invalid options (lr -1",
               optim::RMSprop(fc->parameters(), optim::RMSpropOptions(-1)));
  EXPECT_ERROR("Adagrad: invalid options (lr 0.1, lr_decay -1",
               optim::Adagrad(fc->parameters(), optim::AdagradOptions(0.1).lr_decay(-1)));
  optim::SGD opt(fc->parameters(), optim::SGDOptions(0.1));
  EXPECT_ERROR("LinearLR: factors must be in (0, 1] / [0, 1] and total_iters positive",
               optim::LinearLR(opt, 0.0));
  EXPECT_ERROR(
      "SequentialLR: expected 1 milestones for 2 schedulers, got 0",
      optim::SequentialLR(
          opt, {std::make_shared<optim::StepLR>(opt, 2), std::make_shared<optim::StepLR>(opt, 3)},
          {}));
  EXPECT_ERROR("Embedding: padding_idx must be within num_embeddings, got 7",
               nn::Embedding(5, 2, 7));
  // The functional forms check padding_idx too (a stray one would mask no row at all).
  EXPECT_ERROR(
      "embedding: padding_idx must be within num_embeddings, got 5 for a weight of 5 rows "
      "(expected in [-5, 5))",
      F::embedding(tensor({0, 1}, kLong), randn({5, 2}), 5));
  EXPECT_ERROR("embedding_bag: padding_idx must be within num_embeddings, got -6",
               F::embedding_bag(tensor({{0, 1}}, kLong), randn({5, 2}), {}, EmbeddingBagMode::Sum,
                                {}, false, -6));
  // Out-of-range rows, negative ones included (index_select would wrap them).
  EXPECT_ERROR(
      "embedding: index out of range in self: indices must be in [0, 5) for a weight of "
      "[5, 2], got -1",
      F::embedding(tensor({0, -1}, kLong), randn({5, 2})));
  EXPECT_ERROR(
      "embedding: index out of range in self: indices must be in [0, 5) for a weight of "
      "[5, 2], got 5",
      nn::Embedding(5, 2)->forward(tensor({{1, 5}}, kLong)));
  EXPECT_VALUES(F::embedding(tensor({4, 0}, kLong), arange(10, kFloat).view({5, 2})), {8, 9, 0, 1});
  EXPECT_ERROR("optimizer got an empty parameter list",
               optim::SGD(std::vector<Tensor>{}, optim::SGDOptions(0.1)));
  EXPECT_ERROR("optimizer got an empty parameter list",
               optim::Adam(nn::ReLU()->parameters(), optim::AdamOptions(0.1)));
  EXPECT_ERROR(
      "conv_transpose2d: output_padding must be smaller than either stride or dilation",
      conv_transpose2d(randn({1, 2, 3, 3}), randn({2, 2, 3, 3}), Tensor(), {1, 1}, {0, 0}, {1, 1}));
  EXPECT_ERROR("conv_transpose2d: input channels (3) must equal weight.size(0) (2)",
               conv_transpose2d(randn({1, 3, 3, 3}), randn({2, 2, 3, 3})));

  // A checkpoint for another optimizer layout names both counts.
  std::string p =
      (std::filesystem::temp_directory_path() / ("brasa_err_" + std::to_string(::getpid())))
          .string();
  serialize::save_checkpoint(p, *fc, nullptr);
  EXPECT_ERROR("holds no optimizer state", serialize::load_checkpoint(p, *fc, &opt));
  EXPECT_ERROR("not a tensor list saved by brasa::save", [&] {
    std::vector<Tensor> ts;
    load(ts, p);
  }());
  std::remove(p.c_str());
}

TEST(AutogradErrors, InputsThatDoNotRequireGradAndIValueTypes) {
  Tensor x = randn({2}).requires_grad_(), c = randn({2});
  EXPECT_ERROR("grad: One of the differentiated Tensors (input 1) does not require grad",
               autograd::grad({(x * c).sum()}, {x, c}));
  EXPECT_ERROR("backward: input 0 does not require grad",
               (x * c).sum().backward({}, std::nullopt, false, std::vector<Tensor>{c}));
  autograd::IValue v(2.5);
  EXPECT_ERROR("IValue: expected Tensor but the value holds double", v.toTensor());
  EXPECT_EQ(autograd::IValue(int64_t{3}).toDouble(), 3.0);
}

}  // namespace
}  // namespace brasa
