// Messages of the nn / optim / data errors: each names the op, the shapes or
// values involved and what was expected.
#include "../test_util.h"

namespace brasa {
namespace {


TEST(NnErrors, LayersNameShapesAndExpectations) {
  EXPECT_ERROR("conv2d: expected input [2, 3, 8, 8] to have 4 channels",
               conv2d(randn({2, 3, 8, 8}), randn({5, 4, 3, 3})));
  EXPECT_ERROR("conv2d: expected a 4-D input [N, C, H, W], got 3-D", conv2d(randn({3, 8, 8}), randn({5, 3, 3, 3})));
  EXPECT_ERROR("is larger than the padded input", conv2d(randn({1, 1, 2, 2}), randn({1, 1, 3, 3})));
  EXPECT_ERROR("linear: input of shape [2, 5] does not match the weight's in_features 4",
               F::linear(randn({2, 5}), randn({3, 4})));
  EXPECT_ERROR("batch_norm: expected weight of shape [3]",
               F::batch_norm(randn({4, 3}), Tensor(), Tensor(), ones({2}), Tensor(), true));
  EXPECT_ERROR("layer_norm: input shape [2, 3] does not end with normalized_shape [4]",
               F::layer_norm(randn({2, 3}), {4}));
  EXPECT_ERROR("group_norm: expected input [N, C, ...] with C (3) divisible by num_groups (2)",
               F::group_norm(randn({2, 3, 4}), 2));
  EXPECT_ERROR("max_pool2d: pad should be at most half of kernel size", max_pool2d(randn({1, 1, 4, 4}), {2}, {2}, {2}));
  EXPECT_ERROR("interpolate: mode must be 'nearest' or 'bilinear'", F::interpolate(randn({1, 1, 2, 2}), {3, 3}, "area"));
  EXPECT_ERROR("one_hot: class values must be in [0, 3)", F::one_hot(tensor(std::vector<int64_t>{0, 3}), 3));
  EXPECT_ERROR("dropout: probability has to be between 0 and 1, but got 1.5", F::dropout(randn({2}), 1.5));
  EXPECT_ERROR("nll_loss: target 7 is out of bounds for 3 classes",
               F::nll_loss(randn({2, 3}), tensor(std::vector<int64_t>{0, 7})));
  EXPECT_ERROR("mse_loss: input [2] and target [3] must have the same shape", F::mse_loss(randn({2}), randn({3})));
  EXPECT_ERROR("MultiheadAttention: embed_dim (6) must be divisible by num_heads (4)", nn::MultiheadAttention(6, 4));
  EXPECT_ERROR("TransformerEncoderLayer: activation must be relu or gelu",
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
  EXPECT_ERROR("SGD: invalid learning rate: -1", optim::SGD(fc->parameters(), optim::SGDOptions(-1)));
  EXPECT_ERROR("SGD: nesterov momentum requires a momentum and zero dampening",
               optim::SGD(fc->parameters(), optim::SGDOptions(0.1).nesterov(true)));
  EXPECT_ERROR("Adam: invalid beta parameters: (1, 0.999)",
               optim::Adam(fc->parameters(), optim::AdamOptions(0.1).betas({1.0, 0.999})));
  optim::SGD opt(fc->parameters(), optim::SGDOptions(0.1));
  EXPECT_ERROR("StepLR: step_size must be positive, got 0", optim::StepLR(opt, 0));
  EXPECT_ERROR("OneCycleLR: need total_steps > 0 and 0 < pct_start < 1", optim::OneCycleLR(opt, 1.0, 10, 1.5));
  EXPECT_ERROR("ReduceLROnPlateau: factor should be < 1.0, got 2",
               optim::ReduceLROnPlateau(opt, optim::ReduceLROnPlateau::Mode::kMin, 2.0));
  EXPECT_ERROR("DataLoader: batch_size must be positive, got 0",
               data::make_data_loader(data::TensorDataset(zeros({4, 1}), zeros({4})), data::DataLoaderOptions(0)));
  EXPECT_ERROR("DistributedSampler: invalid rank 3 for 2 replicas", data::samplers::DistributedRandomSampler(10, 2, 3));
  EXPECT_ERROR("Normalize: 3 per-channel values for a batch of shape [1, 2, 1, 1]",
               data::transforms::Normalize<>({0.1, 0.2, 0.3}, {1.0, 1.0, 1.0})({zeros({1, 2, 1, 1}), zeros({1})}));
  EXPECT_ERROR("vector_to_parameters: expected a vector of 6 elements, got shape [3]",
               nn::utils::vector_to_parameters(zeros({3}), fc->parameters()));
}

}  // namespace
}  // namespace brasa
